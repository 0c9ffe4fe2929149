"""The embedded model: the llama.cpp server supervisor, model paths, and CPU safety."""
