"""The int8 matrix products of the neural search (:class:`Int8Weight`, :meth:`LeanModel.int8`)
stay close to the float ones; quantisation error, not bit-exact values, is what is checked."""

from __future__ import annotations

import torch

from apollo_restore.fim.tokenizer import CharTokenizer
from apollo_restore.model.builders import build_model
from apollo_restore.model.lean import Int8Weight, LeanDecoder, LeanModel


def test_int8_product_is_close_to_the_float_one():
    gen = torch.Generator().manual_seed(0)
    w, x = torch.randn(96, 64, generator=gen), torch.randn(3, 5, 64, generator=gen)
    x[0, 0] *= 100  # one outlier token: scaled per token, it does not coarsen the others
    exact, got = x @ w.T, Int8Weight.of(w)(x)
    assert got.shape == exact.shape and got.dtype == torch.float32
    error = (got - exact).norm(dim=-1) / exact.norm(dim=-1)  # per token
    assert float(error.max()) < 0.03, error


def test_int8_copy_keeps_the_float_model_and_follows_its_logits():
    tok = CharTokenizer()
    model = build_model("tiny", tok, seed=7).eval()
    lean = LeanModel.from_hf(model)
    quick = lean.int8()
    assert isinstance(lean.layers[0].qkv, torch.Tensor) and isinstance(quick.layers[0].qkv, Int8Weight)
    ids = tok.encode("ετους δευτερου αυτοκρατορος καισαρος")
    exact, got = (torch.log_softmax(m.prompt(ids).logits, dim=-1) for m in (lean, quick))
    assert float((got - exact).abs().max()) < 0.05
    decoder = LeanDecoder(quick, [quick.prompt(ids)])  # a beam step runs through the int8 path too
    step = decoder.step(torch.tensor(tok.encode("αβ")), torch.zeros(2, dtype=torch.long))
    assert step.shape == (2, len(tok)) and bool(torch.isfinite(step).all())
    body = torch.tensor([tok.encode("του")])
    after = [m.continue_rows(m.prompt(ids), body)[0, -1] for m in (quick, lean)]
    assert torch.allclose(*after, atol=0.1)
