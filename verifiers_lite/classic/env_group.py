"""Classic EnvGroup: ``vf.EnvGroup(envs=[...], env_names=[...])``, several environments as one.

It is verifiers_lite's :class:`~verifiers_lite.envs.env_group.EnvGroup`: each rollout is run and
scored by the environment it came from, as in verifiers 0.3.1 (where a group ran each example's
rollouts through its own environment). ``env_names`` default to ``env_0``, ``env_1``...; they
are the rows' ``task``. Example ids are renumbered over the concatenated datasets, as in 0.3.1.
"""

from __future__ import annotations

from typing import Any

from verifiers_lite.envs.env_group import EnvGroup as NativeEnvGroup

_CLASSIC_ONLY = ("map_kwargs", "message_type", "max_workers", "max_seq_len", "pass_threshold")


class EnvGroup(NativeEnvGroup):
    """Several classic environments as one (see the module)."""

    def __init__(self, envs: list[Any], env_names: list[str] | None = None, **kwargs: Any) -> None:
        if not envs:
            raise ValueError("EnvGroup requires at least one environment")
        names = list(env_names) if env_names else [f"env_{i}" for i in range(len(envs))]
        if len(names) != len(envs):
            raise ValueError("Number of env_names must match number of envs")
        for key in _CLASSIC_ONLY:
            kwargs.pop(key, None)
        super().__init__(envs, names=names, **kwargs)
        self.env_names = names
        self.env_map = dict(self.envs)

    def get_env_for_name(self, name: str) -> Any:
        """The member environment named ``name``."""
        return self.envs[name]
