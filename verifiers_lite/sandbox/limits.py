"""What a sandboxed execution may use, and what it reports back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class SandboxLimits:
    """Per-execution limits.

    ``timeout`` is wall-clock seconds, ``cpu`` CPU seconds; ``memory_mb`` caps the address space
    of each process, ``max_processes`` the processes alive at once, ``max_file_mb`` the size of
    any one file written, ``max_output_bytes`` what is kept of stdout and of stderr each, and
    ``tmp_mb`` the private temporary filesystem (bubblewrap only).
    """

    timeout: float = 10.0  #: wall-clock seconds
    cpu: float = 10.0  #: CPU seconds
    memory_mb: int = 1024  #: address space of each process, in MB
    max_processes: int = 32  #: processes alive at once
    max_file_mb: int = 16  #: size of any one file written, in MB
    max_output_bytes: int = 64_000  #: bytes kept of stdout and of stderr each
    tmp_mb: int = 256  #: the private temporary filesystem, in MB (bubblewrap only)

    def __post_init__(self) -> None:
        for name in (
            "timeout",
            "cpu",
            "memory_mb",
            "max_processes",
            "max_file_mb",
            "max_output_bytes",
            "tmp_mb",
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
                raise ValueError(f"SandboxLimits.{name} must be a positive number, got {value!r}")
        if self.max_processes < 4:
            raise ValueError(
                f"SandboxLimits.max_processes must be >= 4 (the sandbox itself needs some), got {self.max_processes}"
            )

    def job(self, timeout: float | None = None) -> dict[str, Any]:
        """The per-request limits as the worker reads them."""
        return {
            "timeout": float(timeout if timeout is not None else self.timeout),
            "cpu": max(1, int(round(self.cpu))),
            "memory": int(self.memory_mb) << 20,
            "fsize": int(self.max_file_mb) << 20,
            "max_output": int(self.max_output_bytes),
        }


@dataclass(slots=True)
class ExecResult:
    """The outcome of one sandboxed execution.

    ``exit_code`` is the process's exit status (negative: killed by that signal; None: it never
    ran, see ``error``). ``timed_out`` means the wall-clock limit killed it. Output beyond
    ``max_output_bytes`` is cut and flagged in ``stdout_truncated`` / ``stderr_truncated``.
    ``isolation`` says how it ran: ``"bubblewrap"`` or ``"rlimits"`` (the weaker fallback).
    """

    stdout: str = ""  #: what the code printed (cut at ``max_output_bytes``)
    stderr: str = ""  #: what it wrote to stderr (cut the same way)
    exit_code: int | None = None  #: its exit status (above)
    timed_out: bool = False  #: the wall-clock limit killed it
    duration_s: float = 0.0  #: wall-clock seconds it ran
    cpu_s: float = 0.0  #: CPU seconds it used
    stdout_truncated: bool = False  #: stdout was cut
    stderr_truncated: bool = False  #: stderr was cut
    isolation: str = ""  #: ``bubblewrap`` or ``rlimits``
    error: str | None = None  #: why it never ran, when it did not
    extra: dict[str, Any] = field(default_factory=dict)  #: more facts a backend reports

    @property
    def ok(self) -> bool:
        """Exited with status 0 within its limits."""
        return self.exit_code == 0 and not self.timed_out and self.error is None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def describe(self) -> str:
        """Output and status as one text (what a model sees from a code tool)."""
        parts = []
        if self.stdout:
            parts.append(self.stdout + ("\n[stdout truncated]" if self.stdout_truncated else ""))
        if self.stderr:
            parts.append(self.stderr + ("\n[stderr truncated]" if self.stderr_truncated else ""))
        if self.error:
            parts.append(f"[sandbox error: {self.error}]")
        elif self.timed_out:
            parts.append(f"[killed: wall-clock limit reached after {self.duration_s:.1f}s]")
        elif self.exit_code not in (0, None):
            parts.append(f"[exit status {self.exit_code}]")
        return "\n".join(parts) if parts else "[no output]"
