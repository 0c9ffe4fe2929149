"""Test doubles for token-level rollouts: a toy ChatML template and a scripted sampler.

They need no model and no tokenizer library, so rollout logic can be tested deterministically.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .sampling import SampleResult, SamplingParams, params_list
from .template import Template

__all__ = ["ScriptedSampler", "toy_template"]

CHATML = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
_SPECIALS = ["<|im_start|>", "<|im_end|>"]


def toy_template() -> Template:
    """ChatML over a character-level tokenizer: ids 1, 2 are the specials, others are ord+10."""

    def encode(text: str) -> list[int]:
        ids: list[int] = []
        i = 0
        while i < len(text):
            for k, sp in enumerate(_SPECIALS):
                if text.startswith(sp, i):
                    ids.append(k + 1)
                    i += len(sp)
                    break
            else:
                ids.append(ord(text[i]) + 10)
                i += 1
        return ids

    def decode(ids: Sequence[int]) -> str:
        return "".join(_SPECIALS[t - 1] if t in (1, 2) else chr(t - 10) for t in ids)

    return Template(CHATML, encode, decode, stop_token_ids=[2], eos_token="<|im_end|>")


class ScriptedSampler:
    """Answers each prompt with ``respond(decoded_prompt)``, tokenised, plus end-of-turn.

    ``respond`` may return ``(text, False)`` to omit the end-of-turn token. Every call's prompts
    are kept in ``calls`` so tests can check what the rollout sent.
    """

    def __init__(
        self, template: Template, respond: Callable[[str], str | tuple[str, bool]]
    ) -> None:
        self.template = template
        self.respond = respond
        self.calls: list[list[list[int]]] = []

    def sample(
        self, prompts: Sequence[Sequence[int]], params: SamplingParams | Sequence[SamplingParams]
    ) -> list[SampleResult]:
        plist = params_list(params, len(prompts))
        self.calls.append([list(p) for p in prompts])
        out = []
        for prompt, p in zip(prompts, plist, strict=True):
            answer = self.respond(self.template.decode(prompt))
            text, eot = answer if isinstance(answer, tuple) else (answer, True)
            ids = self.template.encode(text) + ([self.template.stop_token_ids[0]] if eot else [])
            finish = "stop"
            if len(ids) > p.max_tokens:
                ids, finish = ids[: p.max_tokens], "length"
            logprobs = [-((t % 7) + 1) / 10 for t in ids] if p.logprobs is not None else None
            out.append(SampleResult(ids, finish, logprobs))  # type: ignore[arg-type]
        return out
