"""Scale-out: any Hugging Face causal LM, streaming shards, FSDP2 training, vLLM serving.

Nothing here is imported by the single-device path; ``peft`` and ``vllm`` are imported only
by the modules that need them.
"""
