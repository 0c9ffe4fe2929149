"""Answer extraction: plain, XML tags, think blocks, \\boxed{}."""

from verifiers_lite.parsers.boxed import extract_boxed_answer
from verifiers_lite.parsers.parser import Parser
from verifiers_lite.parsers.think import ThinkParser
from verifiers_lite.parsers.xml import XMLParser

__all__ = ["Parser", "ThinkParser", "XMLParser", "extract_boxed_answer"]
