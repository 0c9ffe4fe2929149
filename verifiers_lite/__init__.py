"""verifiers_lite: define LLM environments, run them against models, score and study the results.

Public names are imported lazily (PEP 562) so ``import verifiers_lite`` stays fast and never
pulls in datasets, pandas, openai, vllm, ray or torch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports
from verifiers_lite._wiring import wire as _wire
from verifiers_lite.version import __version__

# The public names are the imports of the TYPE_CHECKING block at the end of this file: type
# checkers and IDEs read them there; at run time each is imported on first use.
_LAZY: dict[str, str] = type_checking_exports(__file__)

__all__ = sorted([*_LAZY, "__version__"])


# The root plugs the UI and the classic importer into the layers below (the core never imports
# the UI): verifiers_lite._wiring, a layer of the import contracts.
_wire()


# Names the root offered before they moved to their package (``vf.server.create_rollout_server``):
# they resolve for one more release, with a DeprecationWarning naming the new place.
_MOVED: dict[str, str] = {
    # a record, not an exception: renamed, and left the root for vf.VerifiersError's place
    "RolloutError": "verifiers_lite.core.records:ErrorRecord",
    "LocalBackend": "verifiers_lite.server",
    "RolloutBackend": "verifiers_lite.server",
    "RolloutResultResponse": "verifiers_lite.server",
    "RolloutStatus": "verifiers_lite.server",
    "create_rollout_server": "verifiers_lite.server",
    "deploy_rollout_servers": "verifiers_lite.server",
    "run_rollout_server": "verifiers_lite.server",
    "RolloutAdmissionTimeoutError": "verifiers_lite.remote",
    "RolloutClient": "verifiers_lite.remote",
    "RolloutClientPool": "verifiers_lite.remote",
    "RolloutHandle": "verifiers_lite.remote",
    "RolloutProtocolError": "verifiers_lite.remote",
    "LocalExecutor": "verifiers_lite.executors",
    "RayExecutor": "verifiers_lite.executors",
    "RemoteExecutor": "verifiers_lite.executors",
    "LlamaCppSampler": "verifiers_lite.rollout",
    "MultiTurnRollout": "verifiers_lite.rollout",
    "SamplingParams": "verifiers_lite.rollout",
    "Template": "verifiers_lite.rollout",
    "TokenClient": "verifiers_lite.rollout",
    "ToolManager": "verifiers_lite.rollout",
    "TransformersSampler": "verifiers_lite.rollout",
    "VLLMSampler": "verifiers_lite.rollout",
    "VLLMServerSampler": "verifiers_lite.rollout",
    "build_training_batch": "verifiers_lite.rollout",
    "logprob_report": "verifiers_lite.rollout",
    "training_view": "verifiers_lite.rollout",
    "TrainingDataError": "verifiers_lite.train",
    "grpo_trainer": "verifiers_lite.train",
    "to_prime_rl": "verifiers_lite.train",
    "to_skyrl": "verifiers_lite.train",
    "to_verl": "verifiers_lite.train",
    "validate_training_rows": "verifiers_lite.train",
    "write_token_rows": "verifiers_lite.train",
    "TqdmProgress": "verifiers_lite.ui",
}
# The packages a user reaches from the root (``vf.server``, ``vf.rollout``, ...), imported on first use.
_SUBPACKAGES = frozenset(
    {
        "classic",
        "cli",
        "clients",
        "core",
        "envs",
        "executors",
        "interop",
        "local",
        "parsers",
        "programs",
        "remote",
        "results",
        "rollout",
        "rubrics",
        "run",
        "sandbox",
        "server",
        "stats",
        "testing",
        "tools",
        "train",
        "ui",
    }
)


__getattr__, __dir__ = lazy_exports(
    __name__, _LAZY, globals(), moved=_MOVED, subpackages=_SUBPACKAGES
)


if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite._util.interrupt import RunInterrupted
    from verifiers_lite._util.sync import run_sync
    from verifiers_lite.clients.cache import CachedClient, ResponseCache
    from verifiers_lite.clients.group import ClientGroup
    from verifiers_lite.clients.http import ChatClient
    from verifiers_lite.clients.openai_adapter import OpenAIClientAdapter
    from verifiers_lite.clients.retry import RetryPolicy
    from verifiers_lite.clients.scripted import ScriptedClient
    from verifiers_lite.core.content import ContentNotSupportedError, image_part
    from verifiers_lite.core.errors import (
        ERROR_CATEGORIES,
        ModelAPIError,
        ResumeMismatchError,
        ToolServerError,
        VerifiersError,
    )
    from verifiers_lite.core.limits import Limits
    from verifiers_lite.core.messages import Messages
    from verifiers_lite.core.model_client import ChatResponse, ModelClient
    from verifiers_lite.core.pass_criterion import PassCriterion
    from verifiers_lite.core.pricing import ModelPrice
    from verifiers_lite.core.progress import RunStats
    from verifiers_lite.core.records import (
        DatasetRow,
        ErrorCategory,
        RolloutInput,
        Row,
        State,
        StopReason,
        Timing,
        TokenFields,
        Trajectory,
        Usage,
    )
    from verifiers_lite.core.registry import list_environments, load_environment
    from verifiers_lite.envs.api_multi_turn import APIMultiTurnRollout
    from verifiers_lite.envs.env_group import EnvGroup
    from verifiers_lite.envs.environment import Environment
    from verifiers_lite.envs.multi_turn_env import MultiTurnEnv
    from verifiers_lite.envs.python_env import PythonEnv
    from verifiers_lite.envs.single_turn_env import SingleTurnEnv
    from verifiers_lite.envs.tool_env import ToolEnv
    from verifiers_lite.interop.inspect_export import export_inspect
    from verifiers_lite.interop.inspect_import import load_inspect_log
    from verifiers_lite.local.supervisor import LocalModel, local_model, local_model_client
    from verifiers_lite.parsers.boxed import extract_boxed_answer
    from verifiers_lite.parsers.parser import Parser
    from verifiers_lite.parsers.think import ThinkParser
    from verifiers_lite.parsers.xml import XMLParser
    from verifiers_lite.programs.env import ProgramEnv
    from verifiers_lite.results.compare import compare
    from verifiers_lite.results.outputs import GenerateOutputs, load_results, rescore, rescore_async
    from verifiers_lite.results.paired import (
        ExamplesMismatchError,
        RunComparison,
        compare_runs,
        examples_needed,
    )
    from verifiers_lite.rubrics.judge import JudgeRubric
    from verifiers_lite.rubrics.math import MathRubric
    from verifiers_lite.rubrics.rubric import Rubric, group_reward
    from verifiers_lite.rubrics.score import Score
    from verifiers_lite.run.run_config import RunConfig
    from verifiers_lite.run.until import Precision
    from verifiers_lite.sandbox.limits import ExecResult, SandboxLimits
    from verifiers_lite.sandbox.sandbox import Sandbox, SandboxSession
    from verifiers_lite.stats.error_bars import UndefinedStatistic, clustered_mean
    from verifiers_lite.tools.mcp.config import MCPHTTPServer, MCPStdioServer
    from verifiers_lite.ui.notebook.plots import (
        plot_advantages,
        plot_pass_at_k,
        plot_reward_vs_turns,
        plot_rewards,
    )
    from verifiers_lite.ui.viewer.serve import view
