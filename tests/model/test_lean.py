"""The lean decoding step computes what the Hugging Face forward pass computes."""

from __future__ import annotations

import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.model.lean import LeanDecoder


def test_lean_steps_match_the_full_forward_pass():
    tok = CharTokenizer()
    model = build_model("tiny", tok, seed=3).eval()
    with torch.no_grad():
        for p in model.parameters():  # a random model with non-trivial norms
            p.add_(torch.randn_like(p) * 0.05)
    prompt = tok.encode("κομων μουσαιου του ηρακλειτου")
    rows = [tok.encode("πεκ"), tok.encode("αβγ"), tok.encode("πεα")]
    decoder = LeanDecoder(model)
    first = decoder.start(prompt)
    parents = torch.zeros(len(rows), dtype=torch.long)
    for t in range(3):
        logits = decoder.step(torch.tensor([r[t] for r in rows]), parents)
        parents = torch.arange(len(rows))
        for i, r in enumerate(rows):
            full = model(input_ids=torch.tensor([prompt + r[: t + 1]])).logits[0, -1]
            assert torch.allclose(logits[i], full, atol=1e-4), (t, i)
    assert torch.allclose(first[0], model(input_ids=torch.tensor([prompt])).logits[0, -1], atol=1e-5)


def test_rows_follow_their_parents():
    tok = CharTokenizer()
    model = build_model("tiny", tok, seed=4).eval()
    prompt = tok.encode("ετους δευτερου")
    decoder = LeanDecoder(model)
    decoder.start(prompt)
    decoder.step(torch.tensor(tok.encode("αβ")), torch.zeros(2, dtype=torch.long))
    # row 0 continues row 1 ("β"), row 1 continues row 0 ("α")
    logits = decoder.step(torch.tensor(tok.encode("γδ")), torch.tensor([1, 0]))
    for got, text in zip(logits, ("βγ", "αδ")):
        full = model(input_ids=torch.tensor([prompt + tok.encode(text)])).logits[0, -1]
        assert torch.allclose(got, full, atol=1e-4)
