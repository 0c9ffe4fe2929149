"""Sampler implementations; each imports its backend only when constructed."""
