"""Classic verifiers environments, run unchanged: the names ``import verifiers as vf`` gave.

Environment modules written for the classic API of ``verifiers`` (0.2-0.3: ``vf.SingleTurnEnv``,
``vf.MultiTurnEnv``, ``vf.ToolEnv``, ``vf.Rubric``, parsers, ``load_environment()``) load through
``verifiers_lite.load_environment`` and ``vf-lite eval`` and run as verifiers_lite environments,
with verifiers 0.3.1's semantics where they differ from verifiers_lite's own. Two modes
(:mod:`verifiers_lite.classic.mode`): ``"0.3.1"`` (the default) runs and refuses what 0.3.1 runs
and refuses; ``"lenient"`` also runs what older and newer classic code expects, with a warning
listing each deviation.

How it is scoped: :mod:`verifiers_lite.classic.scope`. In short, verifiers_lite never installs or
imports a top-level ``verifiers`` package and leaves ``sys.modules["verifiers"]`` alone; only
modules recognised as classic (their source imports ``verifiers``, not ``verifiers.v1``) are
executed with an ``__import__`` that answers ``verifiers`` and ``verifiers.<path>`` with this
package. Code elsewhere in the process that imports the real ``verifiers`` gets it.

This package's public names are those of the classic ``verifiers`` namespace (the
``TYPE_CHECKING`` block below), imported on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifiers_lite._util.lazy import lazy_exports, type_checking_exports

_LAZY: dict[str, str] = type_checking_exports(__file__)
__all__ = sorted(_LAZY)
__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals())
__version__ = "0.3.1"  # the classic API this layer follows


if TYPE_CHECKING:  # pragma: no cover - the list of public names (see _LAZY above)
    from verifiers_lite.classic.data import (
        BOXED_SYSTEM_PROMPT,
        THINK_BOXED_SYSTEM_PROMPT,
        extract_boxed_answer,
        extract_hash_answer,
        load_example_dataset,
    )
    from verifiers_lite.classic.decorators import cleanup, setup, stop, teardown
    from verifiers_lite.classic.env_group import EnvGroup
    from verifiers_lite.classic.environment import Environment
    from verifiers_lite.classic.errors import (
        ClassicUnsupportedError,
        EmptyModelResponseError,
        Error,
        InfraError,
        InvalidModelResponseError,
        ModelError,
        OverlongPromptError,
        SandboxError,
        ToolCallError,
        ToolError,
        ToolParseError,
    )
    from verifiers_lite.classic.judge import JudgeRubric
    from verifiers_lite.classic.loading import load_environment
    from verifiers_lite.classic.math import MathRubric
    from verifiers_lite.classic.mode import (
        ClassicDeviationWarning,
        ClassicMode,
        classic_mode,
        set_classic_mode,
    )
    from verifiers_lite.classic.multiturn import MultiTurnEnv, SingleTurnEnv
    from verifiers_lite.classic.parsers import MaybeThinkParser, Parser, ThinkParser, XMLParser
    from verifiers_lite.classic.reasoning_gym import ReasoningGymEnv
    from verifiers_lite.classic.rubric import Rubric, RubricGroup
    from verifiers_lite.classic.tool_env import (
        StatefulToolEnv,
        ToolEnv,
        ToolMonitorRubric,
        ToolRubric,
    )
    from verifiers_lite.classic.types import (
        AssistantMessage,
        ChatMessage,
        ChatMessages,
        DatasetBuilder,
        GroupRewardFunc,
        Info,
        Message,
        Messages,
        MessageType,
        RewardFunc,
        RolloutInput,
        SamplingArgs,
        State,
        SystemMessage,
        TextMessage,
        Tool,
        ToolCall,
        ToolMessage,
        UserMessage,
    )
    from verifiers_lite.classic.unsupported import PythonEnv, SandboxEnv
    from verifiers_lite.classic.utils import (
        MissingKeyError,
        ensure_keys,
        maybe_await,
        print_prompt_completions_sample,
        setup_logging,
    )
