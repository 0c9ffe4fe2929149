"""Notebook layer: live progress widget, reward plots. Needs the ``notebook`` extra."""
