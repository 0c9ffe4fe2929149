"""The embedded model's runtime: llama.cpp CPU safety and the server entry point."""
