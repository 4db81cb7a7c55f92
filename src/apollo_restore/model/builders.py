"""Named model sizes: a small Mistral-shaped decoder (RoPE, RMSNorm, SwiGLU, GQA) built from a
``transformers`` config, no download. ``tiny`` is for tests; ``small`` and ``base`` for CPU
training; any Hugging Face causal LM can be used instead through the scale-out path.
"""

from __future__ import annotations

from transformers import MistralConfig, MistralForCausalLM

from apollo_restore.fim.tokenizer import CharTokenizer

SIZES: dict[str, dict[str, int]] = {
    "tiny": dict(
        hidden_size=64, intermediate_size=176, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2
    ),
    "small": dict(
        hidden_size=256, intermediate_size=704, num_hidden_layers=4, num_attention_heads=8, num_key_value_heads=4
    ),
    "base": dict(
        hidden_size=384, intermediate_size=1024, num_hidden_layers=6, num_attention_heads=8, num_key_value_heads=4
    ),
    # ~10 M parameters: the single-GPU recipe (configs/gpu_medium.yaml)
    "medium": dict(
        hidden_size=384, intermediate_size=1152, num_hidden_layers=6, num_attention_heads=6, num_key_value_heads=2
    ),
    # ~28 M parameters (2.7× medium): the larger single-GPU candidate (configs/gpu_large.yaml)
    "large": dict(
        hidden_size=512, intermediate_size=1536, num_hidden_layers=9, num_attention_heads=8, num_key_value_heads=4
    ),
}


def build_config(size: str, tok: CharTokenizer, max_positions: int = 1024) -> MistralConfig:
    """The ``MistralConfig`` of a named size for the character vocabulary of ``tok``.

    Raises:
        ValueError: unknown size.
    """
    if size not in SIZES:
        raise ValueError(f"unknown model size {size!r}; choose one of {', '.join(SIZES)}")
    return MistralConfig(
        vocab_size=len(tok),
        max_position_embeddings=max_positions,
        sliding_window=None,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        bos_token_id=tok.bos_id,
        eos_token_id=tok.eos_id,
        pad_token_id=tok.pad_id,
        attention_dropout=0.0,
        # torch's fused scaled-dot-product attention (flash / memory-efficient kernels on a GPU);
        # transformers' default today, named so that a change of default cannot slow training
        attn_implementation="sdpa",
        **SIZES[size],
    )


def build_model(size: str, tok: CharTokenizer, seed: int = 0) -> MistralForCausalLM:
    """A randomly initialised model of a named size (seeded)."""
    import torch

    torch.manual_seed(seed)
    return MistralForCausalLM(build_config(size, tok))
