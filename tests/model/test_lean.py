"""The lean forward pass computes what the Hugging Face forward pass computes."""

from __future__ import annotations

import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.model.checkpoint import save_model
from apollo_restore.model.lean import LeanDecoder, LeanModel


def _model(seed: int):
    model = build_model("tiny", CharTokenizer(), seed=seed).eval()
    with torch.no_grad():
        for p in model.parameters():  # a random model with non-trivial norms
            p.add_(torch.randn_like(p) * 0.05)
    return model


def _full(model, ids: list[int]) -> torch.Tensor:
    with torch.no_grad():
        return model(input_ids=torch.tensor([ids])).logits[0]


def test_lean_steps_match_the_full_forward_pass():
    tok = CharTokenizer()
    model = _model(3)
    prompt_ids = tok.encode("κομων μουσαιου του ηρακλειτου")
    rows = [tok.encode("πεκ"), tok.encode("αβγ"), tok.encode("πεα")]
    lean = LeanModel.from_hf(model)
    prompt = lean.prompt(prompt_ids)
    decoder = LeanDecoder(lean, [prompt])
    parents = torch.zeros(len(rows), dtype=torch.long)
    for t in range(3):
        logits = decoder.step(torch.tensor([r[t] for r in rows]), parents)
        parents = torch.arange(len(rows))
        for i, r in enumerate(rows):
            assert torch.allclose(logits[i], _full(model, prompt_ids + r[: t + 1])[-1], atol=1e-4), (t, i)
    assert torch.allclose(prompt.logits[0], _full(model, prompt_ids)[-1], atol=1e-4)


def test_rows_follow_their_parents():
    tok = CharTokenizer()
    model = build_model("tiny", tok, seed=4).eval()
    prompt_ids = tok.encode("ετους δευτερου")
    lean = LeanModel.from_hf(model)
    decoder = LeanDecoder(lean, [lean.prompt(prompt_ids)])
    decoder.step(torch.tensor(tok.encode("αβ")), torch.zeros(2, dtype=torch.long))
    # row 0 continues row 1 ("β"), row 1 continues row 0 ("α")
    logits = decoder.step(torch.tensor(tok.encode("γδ")), torch.tensor([1, 0]))
    for got, text in zip(logits, ("βγ", "αδ")):
        assert torch.allclose(got, _full(model, prompt_ids + tok.encode(text))[-1], atol=1e-4)


def test_rows_of_several_prompts_each_read_their_own():
    tok = CharTokenizer()
    model = _model(5)
    lean = LeanModel.from_hf(model)
    prompts = [tok.encode("ετους τριτου αυτοκρατορος"), tok.encode("κυριου")]  # padding masked in the shorter
    decoder = LeanDecoder(lean, [lean.prompt(ids) for ids in prompts])
    rows = [(1, "καισ"), (0, "τιτο"), (1, "αρου")]  # (prompt, tokens fed)
    parents = torch.tensor([p for p, _ in rows])
    for t in range(4):
        logits = decoder.step(torch.tensor([tok.encode(text)[t] for _, text in rows]), parents)
        parents = torch.arange(len(rows))
        for i, (p, text) in enumerate(rows):
            full = _full(model, prompts[p] + tok.encode(text[: t + 1]))[-1]
            assert torch.allclose(logits[i], full, atol=1e-4), (t, i)


def test_rows_after_a_prompt_match_and_padding_stays_out():
    tok = CharTokenizer()
    model = _model(5)
    prompt_ids = tok.encode("ετους τριτου αυτοκρατορος")
    lean = LeanModel.from_hf(model)
    bodies = [tok.encode("καισαρος"), tok.encode("τιτου")]
    ids = torch.full((2, 8), tok.pad_id, dtype=torch.long)
    for i, body in enumerate(bodies):
        ids[i, : len(body)] = torch.tensor(body)
    logits = lean.continue_rows(lean.prompt(prompt_ids), ids)
    for i, body in enumerate(bodies):
        full = _full(model, prompt_ids + body)[len(prompt_ids) :]
        assert torch.allclose(logits[i, : len(body)], full, atol=1e-4), i


def test_loading_a_folder_without_transformers_gives_the_same_logits(tmp_path):
    tok = CharTokenizer()
    model = _model(6)
    save_model(model, tok, tmp_path, {})
    ids = tok.encode("κυριου")
    loaded = LeanModel.load(tmp_path)
    assert torch.allclose(loaded.prompt(ids).logits, LeanModel.from_hf(model).prompt(ids).logits, atol=1e-5)
