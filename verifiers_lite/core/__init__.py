"""The records a run passes along and the contracts every layer shares: messages, content parts,
reasoning, rollout inputs and output rows, error categories, the rollout State, the model-client
protocol, what a runnable environment offers, the environment registry and the progress interface."""
