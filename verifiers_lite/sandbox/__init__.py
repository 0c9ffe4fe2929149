"""Untrusted code execution: bubblewrap namespaces plus resource limits, pooled workers."""

from verifiers_lite.sandbox.launch import SandboxUnavailableError, bwrap_path
from verifiers_lite.sandbox.limits import ExecResult, SandboxLimits
from verifiers_lite.sandbox.sandbox import Sandbox, SandboxSession

__all__ = [
    "ExecResult",
    "Sandbox",
    "SandboxLimits",
    "SandboxSession",
    "SandboxUnavailableError",
    "bwrap_path",
]
