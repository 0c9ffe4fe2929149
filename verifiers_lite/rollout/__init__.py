"""Token-level multi-turn rollout engine.

Names are imported lazily so ``import verifiers_lite.rollout`` stays cheap and never pulls in
vllm, torch, ray or llama_cpp.
"""

# ruff: noqa: F401  (the TYPE_CHECKING imports are there for type checkers)
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from verifiers_lite._util.lazy import lazy_exports

_EXPORTS: dict[str, str] = {
    "Template": ".template",
    "hermes_tool_prompt": ".template",
    "SamplingParams": ".sampling",
    "SampleResult": ".sampling",
    "Sampler": ".sampling",
    "ToolManager": ".tool_manager",
    "HermesToolParser": ".tool_manager",
    "ParsedToolCall": ".tool_manager",
    "MultiTurnRollout": ".multi_turn",
    "IGNORE_INDEX": ".multi_turn",
    "APIMultiTurnRollout": "verifiers_lite.envs.api_multi_turn",
    "OpenAIChatAPI": "verifiers_lite.clients.chat_api",
    "STOP_REASONS": ".trajectory",
    "is_truncated": ".trajectory",
    "write_trace": ".traces",
    "LlamaCppSampler": ".samplers.llama_cpp",
    "load_llama": ".samplers.llama_cpp",
    "VLLMSampler": ".samplers.vllm",
    "VLLMServerSampler": ".samplers.vllm_server",
    "TransformersSampler": ".samplers.transformers",
    "sample_isolated": ".sampling",
    "logprob_report": ".mismatch",
    "LogprobReport": ".mismatch",
    "hf_scorer": ".mismatch",
    "TokenClient": ".token_client",
    "build_training_batch": ".training",
    "training_view": ".training",
    "TrainingView": ".training",
    "remote_rollout": ".ray_actor",
    "smollm2_gguf_path": "verifiers_lite.local.models",
    "smollm2_hf_checkpoint": "verifiers_lite.local.models",
}

__all__ = sorted(_EXPORTS)

if TYPE_CHECKING:  # pragma: no cover
    from verifiers_lite.clients.chat_api import OpenAIChatAPI
    from verifiers_lite.envs.api_multi_turn import APIMultiTurnRollout
    from verifiers_lite.local.models import smollm2_gguf_path, smollm2_hf_checkpoint

    from .mismatch import LogprobReport, hf_scorer, logprob_report
    from .multi_turn import IGNORE_INDEX, MultiTurnRollout
    from .ray_actor import remote_rollout
    from .samplers.llama_cpp import LlamaCppSampler, load_llama
    from .samplers.transformers import TransformersSampler
    from .samplers.vllm import VLLMSampler
    from .samplers.vllm_server import VLLMServerSampler
    from .sampling import Sampler, SampleResult, SamplingParams, sample_isolated
    from .template import Template, hermes_tool_prompt
    from .token_client import TokenClient
    from .tool_manager import HermesToolParser, ParsedToolCall, ToolManager
    from .traces import write_trace
    from .training import TrainingView, build_training_batch, training_view
    from .trajectory import STOP_REASONS, is_truncated


__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
