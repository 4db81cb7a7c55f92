"""A lean decoding step for the character model: many rows that share one prompt.

Beam search feeds one token per row per step, and every row continues the same prompt. The
Hugging Face cache holds a copy of the prompt's keys and values for every row and re-gathers it
at each step; here the prompt's keys and values are kept once, ``(kv_heads, P, d)`` per layer,
and only each row's own tail, ``(R, kv_heads, t, d)``, is re-gathered. The arithmetic is the
Mistral decoder's (RMSNorm, rotary positions, grouped-query attention, SwiGLU, tied head), read
from the loaded ``MistralForCausalLM`` itself, so the weights stay loadable by ``transformers``;
``tests/model/test_lean.py`` checks the logits against the Hugging Face forward pass.
"""

from __future__ import annotations

import torch
from transformers import DynamicCache


def _rotate_half(x: torch.Tensor) -> torch.Tensor:
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LeanDecoder:
    """Decode steps for rows that share a prompt.

    Args:
        model: a ``MistralForCausalLM`` in eval mode (any dtype).
    """

    def __init__(self, model: torch.nn.Module):
        self.model = model
        cfg = model.config
        self.n_heads, self.n_kv = cfg.num_attention_heads, cfg.num_key_value_heads
        self.head_dim = getattr(cfg, "head_dim", None) or cfg.hidden_size // cfg.num_attention_heads
        self.eps = cfg.rms_norm_eps
        theta = (getattr(cfg, "rope_parameters", None) or {}).get("rope_theta", getattr(cfg, "rope_theta", 10000.0))
        self.inv_freq = 1.0 / (theta ** (torch.arange(0, self.head_dim, 2, dtype=torch.float) / self.head_dim))
        self.layers = model.model.layers
        self.prefix: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.tails: list[tuple[torch.Tensor, torch.Tensor]] = []
        self.position = 0

    @torch.no_grad()
    def start(self, prompt: list[int]) -> torch.Tensor:
        """Run the prompt once; returns the next-token logits ``(1, V)``."""
        device = next(self.model.parameters()).device
        cache = DynamicCache()
        out = self.model(input_ids=torch.tensor([prompt], device=device), past_key_values=cache, use_cache=True)
        self.prefix = [(layer.keys[0], layer.values[0]) for layer in cache.layers]  # (kv, P, d) each
        empty = self.prefix[0][0].new_zeros((1, self.n_kv, 0, self.head_dim))
        self.tails = [(empty, empty) for _ in self.layers]
        self.position = len(prompt)
        return out.logits[:, -1, :]

    def _norm(self, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
        x32 = x.float()
        return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + self.eps)).to(x.dtype) * weight

    @torch.no_grad()
    def step(self, tokens: torch.Tensor, parents: torch.Tensor) -> torch.Tensor:
        """Feed one token per row.

        Args:
            tokens: ``(R,)`` ids, one per new row.
            parents: ``(R,)`` index of each new row's parent among the previous step's rows
                (after :meth:`start`, all zeros).

        Returns:
            Next-token logits ``(R, V)``.
        """
        model = self.model
        h = model.model.embed_tokens(tokens)  # (R, H)
        freqs = self.position * self.inv_freq.to(h.device)
        emb = torch.cat((freqs, freqs))
        cos, sin = emb.cos().to(h.dtype), emb.sin().to(h.dtype)
        rows, group, scale = tokens.numel(), self.n_heads // self.n_kv, self.head_dim**-0.5
        for i, layer in enumerate(self.layers):
            attn = layer.self_attn
            a = self._norm(h, layer.input_layernorm.weight)
            q = attn.q_proj(a).view(rows, self.n_kv, group, self.head_dim)
            k = attn.k_proj(a).view(rows, self.n_kv, 1, self.head_dim)
            v = attn.v_proj(a).view(rows, self.n_kv, 1, self.head_dim)
            q, k = q * cos + _rotate_half(q) * sin, k * cos + _rotate_half(k) * sin
            tail_k, tail_v = self.tails[i]
            tail_k = torch.cat((tail_k[parents], k), dim=2)  # (R, kv, t+1, d)
            tail_v = torch.cat((tail_v[parents], v), dim=2)
            self.tails[i] = (tail_k, tail_v)
            pk, pv = self.prefix[i]  # (kv, P, d)
            s_prefix = torch.einsum("rkgd,kpd->rkgp", q, pk) * scale
            s_tail = torch.einsum("rkgd,rktd->rkgt", q, tail_k) * scale
            probs = torch.softmax(torch.cat((s_prefix, s_tail), dim=-1).float(), dim=-1).to(q.dtype)
            p_len = pk.shape[1]
            o = torch.einsum("rkgp,kpd->rkgd", probs[..., :p_len], pv) + torch.einsum(
                "rkgt,rktd->rkgd", probs[..., p_len:], tail_v
            )
            h = h + attn.o_proj(o.reshape(rows, self.n_heads * self.head_dim))
            mlp = layer.mlp
            a = self._norm(h, layer.post_attention_layernorm.weight)
            h = h + mlp.down_proj(torch.nn.functional.silu(mlp.gate_proj(a)) * mlp.up_proj(a))
        self.position += 1
        return model.lm_head(self._norm(h, model.model.norm.weight))
