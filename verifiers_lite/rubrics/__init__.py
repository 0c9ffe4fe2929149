"""Rubrics and reward helpers."""

from verifiers_lite.rubrics.rubric import Rubric, group_reward, is_group_reward

__all__ = ["Rubric", "group_reward", "is_group_reward"]
