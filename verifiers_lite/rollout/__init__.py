"""Token-level multi-turn rollout engine.

Names are imported on first use, so ``import verifiers_lite.rollout`` stays cheap and never pulls
in vllm, torch, ray or llama_cpp.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

# The public names are the imports of the TYPE_CHECKING block below, each imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
# Names this package offered that other packages define: the multi-turn loop over a chat API is an
# environment's, the chat API a client's, the embedded model's GGUF the local package's, the stop
# reasons and the truncation rule the core's records'.
_MOVED: dict[str, str] = {
    "APIMultiTurnRollout": "verifiers_lite.envs",
    "OpenAIChatAPI": "verifiers_lite.clients",
    "smollm2_gguf_path": "verifiers_lite.local",
    "STOP_REASONS": "verifiers_lite.core.records",
    "is_truncated": "verifiers_lite.core.records",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), moved=_MOVED)

if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.rollout.hf_checkpoint import smollm2_hf_checkpoint
    from verifiers_lite.rollout.mismatch import LogprobReport, hf_scorer, logprob_report
    from verifiers_lite.rollout.multi_turn import IGNORE_INDEX, MultiTurnRollout
    from verifiers_lite.rollout.ray_actor import remote_rollout
    from verifiers_lite.rollout.samplers.llama_cpp import LlamaCppSampler, load_llama
    from verifiers_lite.rollout.samplers.transformers import TransformersSampler
    from verifiers_lite.rollout.samplers.vllm import VLLMSampler
    from verifiers_lite.rollout.samplers.vllm_server import VLLMServerSampler
    from verifiers_lite.rollout.sampling import (
        Sampler,
        SampleResult,
        SamplingParams,
        sample_isolated,
    )
    from verifiers_lite.rollout.template import Template, hermes_tool_prompt
    from verifiers_lite.rollout.token_client import TokenClient
    from verifiers_lite.rollout.tool_manager import HermesToolParser, ParsedToolCall, ToolManager
    from verifiers_lite.rollout.traces import write_trace
    from verifiers_lite.rollout.training import TrainingView, build_training_batch, training_view
