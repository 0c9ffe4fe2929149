"""``Template``: a model's chat template plus its tokenizer, for token-level rollouts.

Renders conversations with the model's own Jinja chat template (taken from a Hugging Face
tokenizer or from GGUF metadata), encodes them with special tokens recognised, and computes the
*bridge* tokens between a sampled assistant turn and the next generation prompt.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime
from functools import cached_property
from typing import Any

from verifiers_lite.core.content import text_only
from verifiers_lite.core.messages import Message

__all__ = ["Template", "hermes_tool_prompt"]

_SENTINEL = "\x00VFL_ASSISTANT_SENTINEL\x00"
#: How the token engine's models are named when they are sent an image: chat templates render text.
TEXT_ONLY = "the token engine's chat template"


def hermes_tool_prompt(tools: Sequence[dict[str, Any]]) -> str:
    """Hermes/Qwen-style tool instructions, for chat templates that ignore ``tools``."""
    lines = "\n".join(json.dumps(t, ensure_ascii=False) for t in tools)
    return (
        "# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
        "You are provided with function signatures within <tools></tools> XML tags:\n"
        f"<tools>\n{lines}\n</tools>\n\n"
        "For each function call, return a json object with function name and arguments within "
        "<tool_call></tool_call> XML tags:\n<tool_call>\n"
        '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
    )


class Template:
    """A chat template bound to one tokenizer.

    ``encode`` must recognise special tokens in text (``<|im_end|>`` becomes one id) and add no
    BOS of its own; ``decode`` must keep special tokens. ``stop_token_ids`` are the end-of-turn
    ids a sampler should stop on.
    """

    def __init__(
        self,
        chat_template: str,
        encode: Callable[[str], list[int]],
        decode: Callable[[Sequence[int]], str],
        stop_token_ids: Sequence[int],
        bos_token: str = "",
        eos_token: str = "",
    ) -> None:
        self.chat_template = chat_template
        self.encode = encode
        self.decode = decode
        self.stop_token_ids = tuple(stop_token_ids)
        self.bos_token = bos_token
        self.eos_token = eos_token
        # Templates that ignore ``tools`` get the tool list as a system prompt instead.
        self.supports_tools = "tools" in chat_template

    # -- constructors ---------------------------------------------------------------------
    @classmethod
    def from_llama(cls, llama: Any) -> Template:
        """From an in-process ``llama_cpp.Llama``: template from the GGUF metadata."""
        meta = llama.metadata
        chat_template = meta.get("tokenizer.chat_template")
        if not chat_template:
            raise ValueError("GGUF has no tokenizer.chat_template metadata")
        eos = llama.token_eos()
        bos = llama.token_bos()

        def token_text(tid: int) -> str:
            return (
                llama.detokenize([tid], special=True).decode("utf-8", errors="replace")
                if tid >= 0
                else ""
            )

        def encode(text: str) -> list[int]:
            return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))

        def decode(ids: Sequence[int]) -> str:
            return llama.detokenize(list(ids), special=True).decode("utf-8", errors="replace")

        stops = {eos}
        eot = getattr(llama, "token_eot", None)
        if callable(eot) and eot() >= 0:
            stops.add(eot())
        return cls(chat_template, encode, decode, sorted(stops), token_text(bos), token_text(eos))

    @classmethod
    def from_hf(cls, tokenizer: Any) -> Template:
        """From a Hugging Face tokenizer (``transformers.PreTrainedTokenizer[Fast]``)."""
        chat_template = tokenizer.chat_template
        if not isinstance(chat_template, str):
            raise ValueError("tokenizer has no single chat_template string")

        def encode(text: str) -> list[int]:
            return list(tokenizer.encode(text, add_special_tokens=False))

        def decode(ids: Sequence[int]) -> str:
            return tokenizer.decode(
                list(ids), skip_special_tokens=False, clean_up_tokenization_spaces=False
            )

        stops = {tokenizer.eos_token_id} if tokenizer.eos_token_id is not None else set()
        return cls(
            chat_template,
            encode,
            decode,
            sorted(stops),
            tokenizer.bos_token or "",
            tokenizer.eos_token or "",
        )

    @classmethod
    def from_pretrained(cls, path: str) -> Template:
        """From a Hugging Face checkpoint directory (needs ``transformers``)."""
        try:
            from transformers import AutoTokenizer
        except ImportError as e:  # pragma: no cover - depends on the environment
            raise ImportError(
                "Template.from_pretrained needs transformers: pip install transformers"
            ) from e
        return cls.from_hf(AutoTokenizer.from_pretrained(path))

    # -- rendering ------------------------------------------------------------------------
    @cached_property
    def _jinja(self) -> Any:
        from jinja2.sandbox import ImmutableSandboxedEnvironment

        def raise_exception(msg: str) -> None:
            raise ValueError(msg)

        env = ImmutableSandboxedEnvironment(
            trim_blocks=True, lstrip_blocks=True, extensions=["jinja2.ext.loopcontrols"]
        )
        env.filters["tojson"] = lambda x, indent=None, **kw: json.dumps(
            x, ensure_ascii=False, indent=indent
        )
        env.globals["raise_exception"] = raise_exception
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        return env.from_string(self.chat_template)

    def _prepare(
        self, messages: Sequence[Message], tools: Sequence[dict[str, Any]] | None
    ) -> list[Message]:
        out: list[Message] = []
        for m in text_only(list(messages), "chat template", TEXT_ONLY):  # text parts as one string
            m = dict(m)
            if m.get("content") is None:
                m["content"] = ""
            # Our assistant turns keep the sampled text verbatim, tool-call markup included;
            # rendering their structured tool_calls too would duplicate the calls.
            if (
                m.get("role") == "assistant"
                and m.get("tool_calls")
                and "<tool_call>" in m["content"]
            ):
                m.pop("tool_calls")
            out.append(m)
        if tools and not self.supports_tools:
            prompt = hermes_tool_prompt(tools)
            if out and out[0].get("role") == "system":
                out[0] = {**out[0], "content": f"{out[0]['content']}\n\n{prompt}"}
            else:
                out.insert(0, {"role": "system", "content": prompt})
        return out

    def render(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = False,
    ) -> str:
        """The conversation as text, exactly as the model's chat template writes it."""
        return self._jinja.render(
            messages=self._prepare(messages, tools),
            tools=list(tools) if tools and self.supports_tools else None,
            add_generation_prompt=add_generation_prompt,
            bos_token=self.bos_token,
            eos_token=self.eos_token,
        )

    def encode_messages(
        self,
        messages: Sequence[Message],
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """Token ids of the rendered conversation (with the generation prompt by default)."""
        return self.encode(self.render(messages, tools, add_generation_prompt))

    def bridge_ids(
        self,
        history: Sequence[Message],
        new_messages: Sequence[Message],
        sampled_ids: Sequence[int],
        tools: Sequence[dict[str, Any]] | None = None,
        add_generation_prompt: bool = True,
    ) -> list[int]:
        """Ids between the end of a sampled assistant turn and the next generation prompt.

        ``history`` is the conversation *before* the sampled assistant turn, ``new_messages``
        what follows it (tool results, a user reply). The bridge is the template text after the
        assistant's content: its end-of-turn token (dropped when the model already sampled it),
        the separator after it (which the model never samples; dropping it is the classic bug),
        the new messages and the generation prompt. Rendering the assistant turn with a sentinel
        in place of its content makes this independent of what the model wrote.
        """
        ctx = [*history, {"role": "assistant", "content": _SENTINEL}, *new_messages]
        text = self.render(ctx, tools, add_generation_prompt)
        if text.count(_SENTINEL) != 1:
            raise ValueError("chat template does not render assistant content verbatim")
        tail_ids = self.encode(text.split(_SENTINEL, 1)[1])
        if (
            sampled_ids
            and tail_ids
            and sampled_ids[-1] == tail_ids[0]
            and sampled_ids[-1] in self.stop_token_ids
        ):
            tail_ids = tail_ids[1:]
        return tail_ids
