"""Lean inference for the character model: its forward pass on plain tensors, rows sharing a prompt.

Beam search feeds one token per row per step, and every row continues the same prompt (or its
gap's, when several gaps are searched together); scoring given readings feeds many rows of
several tokens after that same prompt. A Hugging Face cache
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
    decoder = LeanDecoder(lean, [prompt])           # steps after it (or after several)
    logits = decoder.step(tokens, parents)          # (R, V)
    logits = lean.continue_rows(prompt, rows)       # (R, W, V): readings after it
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import torch
from safetensors.torch import load_file

from apollo_restore.model.verify import (
    CONFIG_FILE,
    LAYER_TENSORS,
    WEIGHTS_FILE,
    check_finite,
    check_weights,
    read_json,
)

_KV = list[tuple[torch.Tensor, torch.Tensor]]


def _linear(x: torch.Tensor, weight: torch.Tensor | Int8Weight) -> torch.Tensor:
    """``x @ weight.T`` for a float weight ``(out, in)``, or for an :class:`Int8Weight`."""
    if isinstance(weight, torch.Tensor):
        return torch.nn.functional.linear(x, weight)
    return weight(x)


@dataclass(frozen=True)
class Int8Weight:
    """A float weight ``(out, in)`` as int8 with one scale per output row, packed for the CPU's
    int8 matrix kernel (``torch.ops.quantized``, the kernels of PyTorch's dynamic quantisation);
    activations are quantised per call with one scale per row (token): each row divided by its
    largest magnitude before the kernel's per-tensor quantisation and multiplied back after, so
    that one outlier token does not coarsen the others. ``reduce_range`` (7-bit activations)
    keeps CPUs without VNNI from saturating their 16-bit sums. (``torchao``'s eager int8 path
    took 1.9× the fp32 time of a beam-shaped product here, against 0.31× for this kernel.)"""

    packed: torch.ScriptObject
    shape: tuple[int, int]  # (out, in), as the float weight's

    @classmethod
    def of(cls, weight: torch.Tensor) -> Int8Weight:
        """Quantise ``weight`` ``(out, in)``."""
        w = weight.float()
        scale = (w.abs().amax(dim=1) / 127).clamp_min(1e-12).double()
        with warnings.catch_warnings():  # quantised tensors are deprecated; the kernels are not replaced yet
            warnings.filterwarnings("ignore", message=".*quantized tensor creation functions.*")
            q = torch.quantize_per_channel(w, scale, torch.zeros(len(w), dtype=torch.long), 0, torch.qint8)
        return cls(torch.ops.quantized.linear_prepack(q, None), tuple(w.shape))

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        """``x @ weight.T``, ``(..., in)`` → ``(..., out)``, float32."""
        peak = x.abs().amax(dim=-1, keepdim=True).clamp_min(1e-12)
        return torch.ops.quantized.linear_dynamic((x / peak).float(), self.packed, True) * peak


def _swap_halves(x: torch.Tensor) -> torch.Tensor:
    """The last dimension's two halves swapped (the rotary ``rotate_half`` without its sign,
    which the sine table carries)."""
    half = x.shape[-1] // 2
    return torch.cat((x[..., half:], x[..., :half]), dim=-1)


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
        self.inv_freq = self.inv_freq.to(self.device)
        self._cos = self._sin = torch.empty(0, self.head_dim, device=self.device)

    def _rotary(self, positions: torch.Tensor, width: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Cosines and signed sines ``(R, T, 1, d)`` of positions ``positions[r] + t``, read from
        a table by position (grown as longer positions come); the sines of the first half
        negated, so that rotating is ``x · cos + swap_halves(x) · sin``."""
        at = positions.to(self.device)[:, None] + torch.arange(width, device=self.device)  # (R, T)
        needed = int(at.max()) + 1
        if needed > len(self._cos):
            grid = torch.arange(max(needed, 2 * len(self._cos), 1024), device=self.device, dtype=torch.float)
            freqs = grid[:, None] * self.inv_freq  # (N, d/2)
            self._cos = torch.cat((freqs.cos(), freqs.cos()), dim=-1).to(self.embed.dtype)
            self._sin = torch.cat((-freqs.sin(), freqs.sin()), dim=-1).to(self.embed.dtype)
        return self._cos[at][:, :, None, :], self._sin[at][:, :, None, :]

    @classmethod
    def from_hf(cls, model: torch.nn.Module) -> LeanModel:
        """The weights of a loaded ``MistralForCausalLM`` (a ``torch.compile``-d one too), as
        they are now (the stacked projections are copies)."""
        model = getattr(model, "_orig_mod", model)
        tensors = {name: p.detach() for name, p in model.named_parameters()}
        return cls(tensors, model.config.to_dict())

    @classmethod
    def load(cls, folder: str | Path, dtype: torch.dtype = torch.float32, device: str = "cpu") -> LeanModel:
        """A model folder's ``config.json`` and ``model.safetensors``, as ``dtype`` on ``device``, once
        the weights' header matches the config (:func:`~apollo_restore.model.verify.check_weights`).

        Raises:
            FileNotFoundError: either file missing.
            ModelFolderError: a broken file, or weights the config does not describe (``E503``–``E511``),
                or a weight that is NaN or infinite (``E518``).
        """
        folder = Path(folder)
        config = read_json(folder / CONFIG_FILE)
        check_weights(folder, config)
        tensors = {name: t.to(device, dtype) for name, t in load_file(str(folder / WEIGHTS_FILE)).items()}
        check_finite(folder / WEIGHTS_FILE, tensors)  # after the cast: a weight too large for dtype is inf
        return cls(tensors, config)

    def int8(self) -> LeanModel:
        """A copy whose matrix products (the layers' projections and the head) run in int8 on
        the CPU (:class:`Int8Weight`); embeddings and norms stay as they are. This model's own
        weights are not touched."""
        copy = object.__new__(LeanModel)
        copy.__dict__.update(self.__dict__)
        fields = ("qkv", "o", "gate_up", "down")
        copy.layers = [replace(layer, **{f: Int8Weight.of(getattr(layer, f)) for f in fields}) for layer in self.layers]
        copy.head = Int8Weight.of(self.head)
        return copy

    def _norm(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * weight

    @torch.inference_mode()
    def forward(
        self, tokens: torch.Tensor, positions: torch.Tensor, prefix: _Prefix | None, tails: _KV | None
    ) -> tuple[torch.Tensor, _KV]:
        """Run ``T`` new tokens per row after its prompt's keys and values and its own tail.

        Args:
            tokens: ``(R, T)`` ids.
            positions: ``(R,)`` position of each row's first new token.
            prefix: the prompts the rows follow (keys and values and which row follows which),
                or ``None`` (a prompt's own run). With ``T > 1``: one prompt and no tails
                (readings scored after it).
            tails: each row's own earlier keys and values, ``(R, kv_heads, t, d)`` per layer
                (already gathered to the new rows), or ``None`` (``t = 0``).

        Returns:
            Logits ``(R, T, V)`` and the new tails ``(R, kv_heads, t + T, d)`` per layer.
            Attention is causal: padding after a row's real tokens never reaches them.
        """
        rows, width = tokens.shape
        h = torch.nn.functional.embedding(tokens, self.embed)  # (R, T, H)
        cos, sin = self._rotary(positions, width)  # (R, T, 1, d)
        n_heads, n_kv, d = self.n_heads, self.n_kv, self.head_dim
        group, scale = n_heads // n_kv, d**-0.5
        linear = _linear
        new_tails: _KV = []
        for i, layer in enumerate(self.layers):
            a = self._norm(h, layer.input_norm)
            qkv = linear(a, layer.qkv).view(rows, width, n_heads + 2 * n_kv, d)
            qk = qkv[:, :, : n_heads + n_kv]  # queries and keys rotated together
            qk = qk * cos + _swap_halves(qk) * sin
            q = qk[:, :, :n_heads].reshape(rows, width, n_kv, group, d)
            k = qk[:, :, n_heads:].transpose(1, 2)  # (R, kv, T, d)
            v = qkv[:, :, n_heads + n_kv :].transpose(1, 2)
            if tails is not None:
                k, v = torch.cat((tails[i][0], k), dim=2), torch.cat((tails[i][1], v), dim=2)
            new_tails.append((k, v))
            if width == 1 and prefix is not None:
                o = self._attend_step(q, k, v, prefix, i, scale)  # (R, T, kv, g, d)
            else:
                shared = None if prefix is None else (prefix.kv[i][0][0], prefix.kv[i][1][0])
                o = self._attend_rows(q, k, v, shared, scale)
            h = h + linear(o.reshape(rows, width, self.n_heads * self.head_dim), layer.o)
            a = self._norm(h, layer.post_norm)
            gate, up = linear(a, layer.gate_up).chunk(2, dim=-1)
            h = h + linear(torch.nn.functional.silu(gate) * up, layer.down)
        return linear(self._norm(h, self.norm), self.head), new_tails

    @staticmethod
    def _attend_step(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, prefix: _Prefix, layer: int, scale: float
    ) -> torch.Tensor:
        """Attention of one new token per row, queries ``(R, 1, kv, g, d)``, over its prompt's
        keys and values and its own tail ``(R, kv, t, d)``; returns ``(R, 1, kv, g, d)``.

        One prompt: its keys and values ``(kv, P, d)`` are read by every row without a copy.
        Several (gaps searched together): each row reads its own prompt's, padded to the
        longest, the padding masked.
        """
        pk, pv = prefix.kv[layer]  # (G, kv, P, d)
        if pk.shape[0] == 1:
            return LeanModel._attend_step_shared(q, k, v, pk[0], pv[0], scale)
        s_tail = torch.einsum("rtkgd,rksd->rkgts", q, k) * scale
        pk, pv = pk[prefix.owner], pv[prefix.owner]  # (R, kv, P, d)
        s_prefix = torch.einsum("rtkgd,rkpd->rkgtp", q, pk) * scale
        s_prefix = s_prefix.masked_fill(~prefix.valid[prefix.owner][:, None, None, None, :], float("-inf"))
        probs = torch.softmax(torch.cat((s_prefix, s_tail), dim=-1).float(), dim=-1).to(q.dtype)
        p_len = pk.shape[-2]
        from_prefix = torch.einsum("rkgtp,rkpd->rtkgd", probs[..., :p_len], pv)
        return from_prefix + torch.einsum("rkgts,rksd->rtkgd", probs[..., p_len:], v)

    @staticmethod
    def _attend_step_shared(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, pk: torch.Tensor, pv: torch.Tensor, scale: float
    ) -> torch.Tensor:
        """:meth:`_attend_step` when every row reads one prompt's ``(kv, P, d)``: the rows'
        queries of a key-value head stacked, ``(kv, R·g, ·)``, so that the prompt's part is one
        matrix product per head, without a copy of the prompt or of its probabilities."""
        rows, _, n_kv, group, d = q.shape
        p_len = pk.shape[1]
        s_tail = torch.matmul(q[:, 0], k.transpose(-1, -2)) * scale  # (R, kv, g, t)
        s_tail = s_tail.permute(1, 0, 2, 3).reshape(n_kv, rows * group, -1)
        s_prefix = torch.matmul(q[:, 0].transpose(0, 1).reshape(n_kv, rows * group, d), pk.transpose(1, 2)) * scale
        probs = torch.softmax(torch.cat((s_prefix, s_tail), dim=-1).float(), dim=-1).to(q.dtype)  # (kv, R·g, P + t)
        from_prefix = torch.matmul(probs[..., :p_len], pv).view(n_kv, rows, group, d).transpose(0, 1)
        from_tail = torch.matmul(probs[..., p_len:].reshape(n_kv, rows, group, -1).transpose(0, 1), v)
        return (from_prefix + from_tail)[:, None]  # (R, 1, kv, g, d)

    @staticmethod
    def _attend_rows(
        q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, prompt: tuple[torch.Tensor, torch.Tensor] | None,
        scale: float,
    ) -> torch.Tensor:  # fmt: skip
        """Causal attention of queries ``(R, T, kv, g, d)`` over their rows' keys and values
        ``(R, kv, T, d)``, after one prompt's ``(kv, P, d)`` that every query sees (or none: a
        prompt's own run); returns ``(R, T, kv, g, d)``. One fused attention call, the prompt
        broadcast to the rows."""
        rows, width, n_kv, group, d = q.shape
        heads = q.permute(0, 2, 3, 1, 4).reshape(rows, n_kv * group, width, d)  # head = kv × group + g
        if prompt is None:
            o = torch.nn.functional.scaled_dot_product_attention(
                heads, k, v, is_causal=True, scale=scale, enable_gqa=True
            )
        else:
            pk, pv = prompt
            p_len = pk.shape[1]
            mask = torch.ones(width, p_len + width, dtype=torch.bool, device=q.device).tril(diagonal=p_len)
            k = torch.cat((pk.expand(rows, -1, -1, -1), k), dim=2)
            v = torch.cat((pv.expand(rows, -1, -1, -1), v), dim=2)
            o = torch.nn.functional.scaled_dot_product_attention(
                heads, k, v, attn_mask=mask, scale=scale, enable_gqa=True
            )
        return o.view(rows, n_kv, group, width, d).permute(0, 3, 1, 2, 4)

    def prompt(self, ids: list[int]) -> Prompt:
        """Run a prompt once (one row)."""
        tokens = torch.tensor([ids], device=self.device)
        logits, kv = self.forward(tokens, torch.zeros(1, dtype=torch.long, device=self.device), None, None)
        return Prompt(tuple(ids), [(k[0], v[0]) for k, v in kv], logits[:, -1, :])

    def continue_rows(self, prompt: Prompt, rows: torch.Tensor) -> torch.Tensor:
        """Logits ``(R, W, V)`` of ``rows`` ``(R, W)`` (right-padded) each following ``prompt``."""
        kv = [(k[None], v[None]) for k, v in prompt.kv]  # one prompt: (1, kv, P, d)
        valid = torch.ones(1, len(prompt.ids), dtype=torch.bool, device=self.device)
        prefix = _Prefix(kv, valid, torch.zeros(len(rows), dtype=torch.long, device=self.device))
        positions = torch.full((len(rows),), len(prompt.ids), device=self.device)
        return self.forward(rows, positions, prefix, None)[0]


@dataclass(frozen=True)
class _Prefix:
    """The prompts rows follow: keys and values ``(G, kv_heads, P, d)`` per layer (padded to the
    longest), ``valid`` ``(G, P)`` (the real positions) and ``owner``
    ``(R,)``: the prompt each row follows."""

    kv: _KV
    valid: torch.Tensor
    owner: torch.Tensor


class LeanDecoder:
    """Decode steps for rows that follow one or several prompts (several gaps searched together).

    Args:
        model: the :class:`LeanModel`.
        prompts: the prompts already run (:meth:`LeanModel.prompt`); the rows of the first
            step continue them (a row's parent is a prompt's index).
    """

    def __init__(self, model: LeanModel, prompts: list[Prompt]):
        self.model = model
        lengths = [len(p.ids) for p in prompts]
        longest = max(lengths)

        def stacked(i: int, j: int) -> torch.Tensor:  # layer i's keys (j = 0) or values, (G, kv, P, d)
            parts = [p.kv[i][j] for p in prompts]
            return torch.stack([torch.nn.functional.pad(x, (0, 0, 0, longest - x.shape[1])) for x in parts])

        kv = [(stacked(i, 0), stacked(i, 1)) for i in range(len(prompts[0].kv))]
        self.lengths = torch.tensor(lengths, device=model.device)
        valid = torch.arange(longest, device=model.device)[None, :] < self.lengths[:, None]  # (G, P)
        self.prefix = _Prefix(kv, valid, torch.arange(len(prompts), device=model.device))
        self.tails: _KV | None = None
        self.fed = 0  # tokens fed to every row so far

    def step(self, tokens: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
        """Feed one token per row.

        Args:
            tokens: ``(R,)`` ids, one per new row.
            parents: ``(R,)`` index of each new row's parent among the previous step's rows
                (at the first step, the prompt it continues).

        Returns:
            Next-token logits ``(R, V)``.
        """
        tails = None if self.tails is None else [(k[parents], v[parents]) for k, v in self.tails]
        self.prefix = replace(self.prefix, owner=self.prefix.owner[parents])
        positions = self.lengths[self.prefix.owner] + self.fed
        logits, self.tails = self.model.forward(tokens[:, None], positions, self.prefix, tails)
        self.fed += 1
        return logits[:, -1, :]
