"""Execution backends for the rollout server."""
