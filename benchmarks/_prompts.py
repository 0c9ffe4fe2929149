"""Question templates shared by the token-level benchmarks (varied lengths, no tools)."""

QUESTIONS = [
    "What is {a}+{b}?",
    "Name a colour that starts with the letter {c}.",
    "Write one sentence about the number {a}.",
    "Spell the word '{w}' backwards.",
    "Is {a} larger than {b}? Answer briefly.",
    "Give a synonym for '{w}'.",
]
WORDS = ["apple", "river", "stone", "light", "cloud", "green", "quick", "table"]
