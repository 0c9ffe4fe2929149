"""verifiers_lite: define LLM environments, run them against models, score and study the results.

Public names are imported lazily (PEP 562) so ``import verifiers_lite`` stays fast and never
pulls in datasets, pandas, openai, vllm, ray or torch.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from verifiers_lite.lazy import lazy_exports
from verifiers_lite.version import __version__

_LAZY: dict[str, str] = {
    # environments
    "Environment": "verifiers_lite.envs.environment",
    "SingleTurnEnv": "verifiers_lite.envs.singleturn",
    "MultiTurnEnv": "verifiers_lite.envs.multiturn",
    "ToolEnv": "verifiers_lite.envs.tool_env",
    "PythonEnv": "verifiers_lite.envs.python_env",
    "EnvGroup": "verifiers_lite.envs.env_group",
    "load_environment": "verifiers_lite.registry",
    "list_environments": "verifiers_lite.registry",
    # sandboxed code execution (extra: code)
    "Sandbox": "verifiers_lite.sandbox.sandbox",
    "SandboxSession": "verifiers_lite.sandbox.sandbox",
    "SandboxLimits": "verifiers_lite.sandbox.limits",
    "ExecResult": "verifiers_lite.sandbox.limits",
    # scoring and parsing
    "Rubric": "verifiers_lite.rubrics.rubric",
    "group_reward": "verifiers_lite.rubrics.rubric",
    "JudgeRubric": "verifiers_lite.rubrics.judge",
    "MathRubric": "verifiers_lite.rubrics.math",
    "Parser": "verifiers_lite.parsers.parser",
    "XMLParser": "verifiers_lite.parsers.xml",
    "ThinkParser": "verifiers_lite.parsers.think",
    "extract_boxed_answer": "verifiers_lite.parsers.boxed",
    # models
    "ChatClient": "verifiers_lite.clients.http",
    "ChatResponse": "verifiers_lite.clients.base",
    "ModelClient": "verifiers_lite.clients.base",
    "OpenAIClientAdapter": "verifiers_lite.clients.openai_adapter",
    "ScriptedClient": "verifiers_lite.clients.scripted",
    "ClientGroup": "verifiers_lite.clients.group",
    "RetryPolicy": "verifiers_lite.clients.retry",
    "CachedClient": "verifiers_lite.clients.cache",
    "ResponseCache": "verifiers_lite.clients.cache",
    "LocalModel": "verifiers_lite.local.supervisor",
    "local_model": "verifiers_lite.local.supervisor",
    "local_model_client": "verifiers_lite.local.supervisor",
    # execution
    "LocalExecutor": "verifiers_lite.executors.local",
    "RayExecutor": "verifiers_lite.executors.ray",
    "RemoteExecutor": "verifiers_lite.executors.remote",
    # results and progress
    "GenerateOutputs": "verifiers_lite.results.outputs",
    "RunConfig": "verifiers_lite.run_config",
    "PassCriterion": "verifiers_lite.results.metrics",
    "RunStats": "verifiers_lite.progress",
    "RunInterrupted": "verifiers_lite.interrupt",
    "State": "verifiers_lite.records",
    "RolloutInput": "verifiers_lite.records",
    "Row": "verifiers_lite.records",
    "StopReason": "verifiers_lite.records",
    "Messages": "verifiers_lite.messages",
    "TqdmProgress": "verifiers_lite.progress",
    "run_sync": "verifiers_lite.sync",
    "load_results": "verifiers_lite.results.outputs",
    "rescore": "verifiers_lite.results.outputs",
    "rescore_async": "verifiers_lite.results.outputs",
    "compare": "verifiers_lite.results.compare",
    "compare_runs": "verifiers_lite.results.paired",
    "examples_needed": "verifiers_lite.results.paired",
    "RunComparison": "verifiers_lite.results.paired",
    "ExamplesMismatchError": "verifiers_lite.results.paired",
    "clustered_mean": "verifiers_lite.stats",
    "plot_rewards": "verifiers_lite.notebook.plots",
    "plot_reward_vs_turns": "verifiers_lite.notebook.plots",
    "plot_pass_at_k": "verifiers_lite.notebook.plots",
    "plot_advantages": "verifiers_lite.notebook.plots",
    "view": "verifiers_lite.viewer.serve",
    # rollout server and client (extra: server)
    "create_rollout_server": "verifiers_lite.server.app",
    "run_rollout_server": "verifiers_lite.server.runner",
    "RolloutBackend": "verifiers_lite.server.backend",
    "LocalBackend": "verifiers_lite.server.backends.local",
    "RolloutClient": "verifiers_lite.remote.client",
    "RolloutClientPool": "verifiers_lite.remote.pool",
    "deploy_rollout_servers": "verifiers_lite.server.ray_deploy",
    "RolloutHandle": "verifiers_lite.remote.handle",
    "RolloutStatus": "verifiers_lite.server.types",
    "RolloutResultResponse": "verifiers_lite.server.types",
    "RolloutAdmissionTimeoutError": "verifiers_lite.remote.errors",
    "RolloutProtocolError": "verifiers_lite.remote.errors",
    # token-level rollouts (samplers need the local / vllm extras)
    "Template": "verifiers_lite.rollout.template",
    "SamplingParams": "verifiers_lite.rollout.sampling",
    "ToolManager": "verifiers_lite.rollout.tool_manager",
    "MultiTurnRollout": "verifiers_lite.rollout.multi_turn",
    "APIMultiTurnRollout": "verifiers_lite.rollout.api_multi_turn",
    "LlamaCppSampler": "verifiers_lite.rollout.samplers.llama_cpp",
    "VLLMSampler": "verifiers_lite.rollout.samplers.vllm",
    "TokenClient": "verifiers_lite.rollout.token_client",
    "build_training_batch": "verifiers_lite.rollout.training",
    "VLLMServerSampler": "verifiers_lite.rollout.samplers.vllm_server",
    "TransformersSampler": "verifiers_lite.rollout.samplers.transformers",
    "logprob_report": "verifiers_lite.rollout.mismatch",
    # training: trainer formats, their validator (extra: train for Parquet and TRL)
    "validate_training_rows": "verifiers_lite.train.validate",
    "TrainingDataError": "verifiers_lite.train.validate",
    "to_verl": "verifiers_lite.train.formats",
    "to_skyrl": "verifiers_lite.train.formats",
    "to_prime_rl": "verifiers_lite.train.formats",
    "write_token_rows": "verifiers_lite.train.token_files",
    "grpo_trainer": "verifiers_lite.train.grpo",
    # errors
    "ModelAPIError": "verifiers_lite.errors",
    "ResumeMismatchError": "verifiers_lite.errors",
    "ERROR_CATEGORIES": "verifiers_lite.errors",
}

__all__ = sorted([*_LAZY, "__version__"])


def _notebook_display(desc: str) -> Any:
    """The live widget, where it applies: the notebook layer imported only when a run starts."""
    from verifiers_lite.notebook.display import notebook_progress

    return notebook_progress(desc)


def _view(outputs: Any, **kwargs: Any) -> Any:
    from verifiers_lite.viewer.serve import view

    return view(outputs, **kwargs)


def _write_html(outputs: Any, path: Any) -> Any:
    from verifiers_lite.viewer.standalone import write_html

    return write_html(outputs, path)


# The core never imports the UI: the package root, on top of both, offers the UI to it (the
# default progress display, the viewer behind ``out.view()``), importing the UI only when used.
importlib.import_module("verifiers_lite.progress").register_display(_notebook_display)
_outputs = importlib.import_module("verifiers_lite.results.outputs")
_outputs.register_viewer("view", _view)
_outputs.register_viewer("write_html", _write_html)


_lazy_getattr, __dir__ = lazy_exports(__name__, _LAZY, globals())


def __getattr__(name: str) -> Any:
    if name == "rollout":  # ``vf.rollout.logprob_report(...)``: the token-level engine, on first use
        return importlib.import_module("verifiers_lite.rollout")
    return _lazy_getattr(name)


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from verifiers_lite.clients.base import ChatResponse, ModelClient
    from verifiers_lite.clients.cache import CachedClient, ResponseCache
    from verifiers_lite.clients.group import ClientGroup
    from verifiers_lite.clients.http import ChatClient
    from verifiers_lite.clients.openai_adapter import OpenAIClientAdapter
    from verifiers_lite.clients.retry import RetryPolicy
    from verifiers_lite.clients.scripted import ScriptedClient
    from verifiers_lite.envs.env_group import EnvGroup
    from verifiers_lite.envs.environment import Environment
    from verifiers_lite.envs.multiturn import MultiTurnEnv
    from verifiers_lite.envs.python_env import PythonEnv
    from verifiers_lite.envs.singleturn import SingleTurnEnv
    from verifiers_lite.envs.tool_env import ToolEnv
    from verifiers_lite.errors import ERROR_CATEGORIES, ModelAPIError, ResumeMismatchError
    from verifiers_lite.executors.local import LocalExecutor
    from verifiers_lite.executors.ray import RayExecutor
    from verifiers_lite.executors.remote import RemoteExecutor
    from verifiers_lite.interrupt import RunInterrupted
    from verifiers_lite.local.supervisor import LocalModel, local_model, local_model_client
    from verifiers_lite.messages import Messages
    from verifiers_lite.notebook.plots import (
        plot_advantages,
        plot_pass_at_k,
        plot_reward_vs_turns,
        plot_rewards,
    )
    from verifiers_lite.parsers.boxed import extract_boxed_answer
    from verifiers_lite.parsers.parser import Parser
    from verifiers_lite.parsers.think import ThinkParser
    from verifiers_lite.parsers.xml import XMLParser
    from verifiers_lite.progress import RunStats, TqdmProgress
    from verifiers_lite.records import RolloutInput, Row, State, StopReason
    from verifiers_lite.registry import list_environments, load_environment
    from verifiers_lite.remote.client import RolloutClient
    from verifiers_lite.remote.errors import RolloutAdmissionTimeoutError, RolloutProtocolError
    from verifiers_lite.remote.handle import RolloutHandle
    from verifiers_lite.remote.pool import RolloutClientPool
    from verifiers_lite.results.compare import compare
    from verifiers_lite.results.metrics import PassCriterion
    from verifiers_lite.results.outputs import GenerateOutputs, load_results, rescore, rescore_async
    from verifiers_lite.results.paired import (
        ExamplesMismatchError,
        RunComparison,
        compare_runs,
        examples_needed,
    )
    from verifiers_lite.rollout.api_multi_turn import APIMultiTurnRollout
    from verifiers_lite.rollout.mismatch import logprob_report
    from verifiers_lite.rollout.multi_turn import MultiTurnRollout
    from verifiers_lite.rollout.samplers.llama_cpp import LlamaCppSampler
    from verifiers_lite.rollout.samplers.transformers import TransformersSampler
    from verifiers_lite.rollout.samplers.vllm import VLLMSampler
    from verifiers_lite.rollout.samplers.vllm_server import VLLMServerSampler
    from verifiers_lite.rollout.sampling import SamplingParams
    from verifiers_lite.rollout.template import Template
    from verifiers_lite.rollout.token_client import TokenClient
    from verifiers_lite.rollout.tool_manager import ToolManager
    from verifiers_lite.rollout.training import build_training_batch
    from verifiers_lite.rubrics.judge import JudgeRubric
    from verifiers_lite.rubrics.math import MathRubric
    from verifiers_lite.rubrics.rubric import Rubric, group_reward
    from verifiers_lite.run_config import RunConfig
    from verifiers_lite.sandbox.limits import ExecResult, SandboxLimits
    from verifiers_lite.sandbox.sandbox import Sandbox, SandboxSession
    from verifiers_lite.server.app import create_rollout_server
    from verifiers_lite.server.backend import RolloutBackend
    from verifiers_lite.server.backends.local import LocalBackend
    from verifiers_lite.server.ray_deploy import deploy_rollout_servers
    from verifiers_lite.server.runner import run_rollout_server
    from verifiers_lite.server.types import RolloutResultResponse, RolloutStatus
    from verifiers_lite.stats import clustered_mean
    from verifiers_lite.sync import run_sync
    from verifiers_lite.train.formats import to_prime_rl, to_skyrl, to_verl
    from verifiers_lite.train.grpo import grpo_trainer
    from verifiers_lite.train.token_files import write_token_rows
    from verifiers_lite.train.validate import TrainingDataError, validate_training_rows
    from verifiers_lite.viewer.serve import view
