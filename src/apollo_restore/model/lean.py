"""Lean inference for the character model: its forward pass on plain tensors, rows sharing a prompt.

Beam search feeds one token per row per step, and every row continues the same prompt; scoring
given readings feeds many rows of several tokens after that same prompt. A Hugging Face cache
holds a copy of the prompt's keys and values for every row; here the prompt's keys and values
are kept once, ``(kv_heads, P, d)`` per layer, and only each row's own tail,
``(R, kv_heads, t, d)``, is re-gathered. The arithmetic is the Mistral decoder's (RMSNorm,
rotary positions, grouped-query attention, SwiGLU, tied head). :meth:`LeanModel.load` reads a
model folder's ``config.json`` and ``model.safetensors`` directly, without importing
``transformers`` (about 1.5 s of a CLI call); :meth:`LeanModel.from_hf` wraps a loaded
``MistralForCausalLM``, so the weights stay loadable by ``transformers``.
``tests/model/test_lean.py`` checks the logits against the Hugging Face forward pass.

    lean = LeanModel.load(folder)
    prompt = lean.prompt(ids)                       # run once per gap
    decoder = LeanDecoder(lean, prompt)             # beam steps after it
    logits = lean.continue_rows(prompt, rows)       # (R, W, V): readings after it
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from apollo_restore.model.verify import CONFIG_FILE, LAYER_TENSORS, WEIGHTS_FILE, check_weights, read_json

_KV = list[tuple[torch.Tensor, torch.Tensor]]


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


@dataclass(frozen=True)
class _Layer:
    """One decoder layer's weights (``torch.nn.Linear`` layout: ``(out, in)``), the query, key
    and value projections stacked into one matrix, and the gate and up projections into another
    (one matrix product each instead of three and two)."""

    qkv: torch.Tensor
    o: torch.Tensor
    gate_up: torch.Tensor
    down: torch.Tensor
    input_norm: torch.Tensor
    post_norm: torch.Tensor

    @classmethod
    def of(cls, w: dict[str, torch.Tensor]) -> _Layer:
        """From the Hugging Face parameters of one layer (names of :data:`LAYER_TENSORS`)."""
        return cls(
            torch.cat((w["q"], w["k"], w["v"])),
            w["o"],
            torch.cat((w["gate"], w["up"])),
            w["down"],
            w["input_norm"],
            w["post_norm"],
        )


@dataclass(frozen=True)
class Prompt:
    """A prompt run once: its keys and values per layer, ``(kv_heads, P, d)`` each, and the
    logits of the token after it, ``(1, V)``."""

    ids: tuple[int, ...]
    kv: _KV
    logits: torch.Tensor


class LeanModel:
    """A Mistral causal LM's weights and its forward pass over rows that share a prompt.

    Args:
        tensors: parameter name → tensor, Hugging Face names (``model.layers.0.self_attn.q_proj.weight``...).
        config: the ``config.json`` fields (``num_attention_heads``, ``num_key_value_heads``,
            ``hidden_size``, ``rms_norm_eps``, ``rope_parameters``/``rope_theta``, ``head_dim``).
    """

    def __init__(self, tensors: dict[str, torch.Tensor], config: dict[str, Any]):
        self.n_heads, self.n_kv = config["num_attention_heads"], config["num_key_value_heads"]
        self.head_dim = config.get("head_dim") or config["hidden_size"] // self.n_heads
        self.eps = config["rms_norm_eps"]
        theta = (config.get("rope_parameters") or {}).get("rope_theta", config.get("rope_theta", 10000.0))
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float) / self.head_dim))
        n_layers = config["num_hidden_layers"]
        self.layers = [
            _Layer.of({field: tensors[f"model.layers.{i}.{name}"] for field, name in LAYER_TENSORS.items()})
            for i in range(n_layers)
        ]
        self.embed = tensors["model.embed_tokens.weight"]
        self.norm = tensors["model.norm.weight"]
        self.head = tensors.get("lm_head.weight", self.embed)  # tied unless the folder has its own head
        self.device = self.embed.device

    @classmethod
    def from_hf(cls, model: torch.nn.Module) -> LeanModel:
        """The weights of a loaded ``MistralForCausalLM`` (a ``torch.compile``-d one too), as
        they are now (the stacked projections are copies)."""
        model = getattr(model, "_orig_mod", model)
        tensors = {name: p.detach() for name, p in model.named_parameters()}
        return cls(tensors, model.config.to_dict())

    @classmethod
    def load(cls, folder: str | Path, dtype: torch.dtype = torch.float32) -> LeanModel:
        """A model folder's ``config.json`` and ``model.safetensors``, as ``dtype``, once the
        weights' header matches the config (:func:`~apollo_restore.model.verify.check_weights`).

        Raises:
            FileNotFoundError: either file missing.
            ModelFolderError: a broken file, or weights the config does not describe (``E503``–``E511``).
        """
        folder = Path(folder)
        config = read_json(folder / CONFIG_FILE)
        check_weights(folder, config)
        tensors = {name: t.to(dtype) for name, t in load_file(str(folder / WEIGHTS_FILE)).items()}
        return cls(tensors, config)

    def _norm(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * weight

    @torch.inference_mode()
    def forward(
        self, tokens: torch.Tensor, start: int, prefix: _KV | None, tails: _KV | None
    ) -> tuple[torch.Tensor, _KV]:
        """Run ``T`` new tokens per row after a shared prefix and each row's own tail.

        Args:
            tokens: ``(R, T)`` ids; row ``r``'s token ``j`` sits at position ``start + t + j``.
            start: position of the first token after ``prefix`` (its length).
            prefix: keys and values shared by all rows, ``(kv_heads, P, d)`` per layer, or ``None``.
            tails: each row's own earlier keys and values, ``(R, kv_heads, t, d)`` per layer
                (already gathered to the new rows), or ``None`` (``t = 0``).

        Returns:
            Logits ``(R, T, V)`` and the new tails ``(R, kv_heads, t + T, d)`` per layer.
            Attention is causal: padding after a row's real tokens never reaches them.
        """
        rows, width = tokens.shape
        t_old = 0 if tails is None else tails[0][0].shape[2]
        h = torch.nn.functional.embedding(tokens, self.embed)  # (R, T, H)
        positions = torch.arange(start + t_old, start + t_old + width, dtype=torch.float)
        freqs = positions[:, None] * self.inv_freq[None, :]
        emb = torch.cat((freqs, freqs), dim=-1).to(h.device)  # (T, d)
        cos, sin = emb.cos().to(h.dtype), emb.sin().to(h.dtype)
        cos_q, sin_q = cos[None, :, None, None, :], sin[None, :, None, None, :]
        cos_k, sin_k = cos[None, :, None, :], sin[None, :, None, :]
        group, scale, kv_width = self.n_heads // self.n_kv, self.head_dim**-0.5, self.n_kv * self.head_dim
        linear = torch.nn.functional.linear
        new_tails: _KV = []
        for i, layer in enumerate(self.layers):
            a = self._norm(h, layer.input_norm)
            q, k, v = linear(a, layer.qkv).split((self.n_heads * self.head_dim, kv_width, kv_width), dim=-1)
            q = q.reshape(rows, width, self.n_kv, group, self.head_dim)
            k = k.reshape(rows, width, self.n_kv, self.head_dim)
            v = v.reshape(rows, width, self.n_kv, self.head_dim)
            q = q * cos_q + _rotate_half(q) * sin_q
            k = (k * cos_k + _rotate_half(k) * sin_k).transpose(1, 2)  # (R, kv, T, d)
            v = v.transpose(1, 2)
            if tails is not None:
                k, v = torch.cat((tails[i][0], k), dim=2), torch.cat((tails[i][1], v), dim=2)
            new_tails.append((k, v))
            o = self._attend(q, k, v, None if prefix is None else prefix[i], t_old, scale)  # (R, T, kv, g, d)
            h = h + linear(o.reshape(rows, width, self.n_heads * self.head_dim), layer.o)
            a = self._norm(h, layer.post_norm)
            gate, up = linear(a, layer.gate_up).chunk(2, dim=-1)
            h = h + linear(torch.nn.functional.silu(gate) * up, layer.down)
        return linear(self._norm(h, self.norm), self.head), new_tails

    @staticmethod
    def _attend(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, prefix: tuple[torch.Tensor, torch.Tensor] | None, t_old: int,
        scale: float,
    ) -> torch.Tensor:  # fmt: skip
        """Attention of queries ``(R, T, kv, g, d)`` over the shared prefix ``(kv, P, d)`` and the
        rows' tails ``(R, kv, t_old + T, d)``, causal within the tail; returns ``(R, T, kv, g, d)``.

        One new token per row (beam steps): scores against the prefix are taken without copying
        it to every row. Several (a prompt, readings to score): one fused attention call, the
        prefix broadcast to the rows.
        """
        rows, width, n_kv, group, d = q.shape
        if width == 1:
            s_tail = torch.einsum("rtkgd,rksd->rkgts", q, k) * scale
            if prefix is None:
                probs = torch.softmax(s_tail.float(), dim=-1).to(q.dtype)
                return torch.einsum("rkgts,rksd->rtkgd", probs, v)
            pk, pv = prefix
            s_prefix = torch.einsum("rtkgd,kpd->rkgtp", q, pk) * scale
            probs = torch.softmax(torch.cat((s_prefix, s_tail), dim=-1).float(), dim=-1).to(q.dtype)
            p_len = pk.shape[1]
            return torch.einsum("rkgtp,kpd->rtkgd", probs[..., :p_len], pv) + torch.einsum(
                "rkgts,rksd->rtkgd", probs[..., p_len:], v
            )
        heads = q.permute(0, 2, 3, 1, 4).reshape(rows, n_kv * group, width, d)  # head = kv × group + g
        # query j (at tail position t_old + j) sees the prefix and the tail up to itself
        s = torch.arange(k.shape[2], device=q.device)
        mask = s[None, :] <= t_old + torch.arange(width, device=q.device)[:, None]  # (T, t_old + T)
        if prefix is not None:
            pk, pv = prefix
            k = torch.cat((pk.expand(rows, -1, -1, -1), k), dim=2)
            v = torch.cat((pv.expand(rows, -1, -1, -1), v), dim=2)
            mask = torch.cat((mask.new_ones((width, pk.shape[1])), mask), dim=1)
        o = torch.nn.functional.scaled_dot_product_attention(heads, k, v, attn_mask=mask, scale=scale, enable_gqa=True)
        return o.view(rows, n_kv, group, width, d).permute(0, 3, 1, 2, 4)

    def prompt(self, ids: list[int]) -> Prompt:
        """Run a prompt once (one row)."""
        logits, kv = self.forward(torch.tensor([ids], device=self.device), 0, None, None)
        return Prompt(tuple(ids), [(k[0], v[0]) for k, v in kv], logits[:, -1, :])

    def continue_rows(self, prompt: Prompt, rows: torch.Tensor) -> torch.Tensor:
        """Logits ``(R, W, V)`` of ``rows`` ``(R, W)`` (right-padded) each following ``prompt``."""
        return self.forward(rows, len(prompt.ids), prompt.kv, None)[0]


class LeanDecoder:
    """Decode steps for rows that share a prompt.

    Args:
        model: the :class:`LeanModel`.
        prompt: the prompt already run (:meth:`LeanModel.prompt`).
    """

    def __init__(self, model: LeanModel, prompt: Prompt):
        self.model, self.prompt = model, prompt
        self.tails: _KV | None = None

    def step(self, tokens: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
        """Feed one token per row.

        Args:
            tokens: ``(R,)`` ids, one per new row.
            parents: ``(R,)`` index of each new row's parent among the previous step's rows
                (at the first step, all zeros).

        Returns:
            Next-token logits ``(R, V)``.
        """
        tails = None if self.tails is None else [(k[parents], v[parents]) for k, v in self.tails]
        logits, self.tails = self.model.forward(tokens[:, None], len(self.prompt.ids), self.prompt.kv, tails)
        return logits[:, -1, :]
