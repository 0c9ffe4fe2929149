"""Message content parts (OpenAI format): images in prompts, and models that read text only.

``content`` is a string or a list of parts, ``{"type": "text", "text": ...}`` and
``{"type": "image_url", "image_url": {"url": ...}}`` (a ``data:`` URI or a URL). Endpoints
that take parts get them unchanged. A model known to read text only (the embedded model, the
token engine's chat templates) gets a list of text parts as one string, and an image is refused
before any request: :class:`ContentNotSupportedError`, naming where the part is.
"""

from __future__ import annotations

import base64
import mimetypes
import os
from pathlib import Path
from typing import Any

from verifiers_lite._util.errors import VerifiersError
from verifiers_lite.core.messages import Message


class ContentNotSupportedError(VerifiersError, ValueError):
    """A message holds a part (an image) the model cannot read; nothing was sent."""


def image_part(source: str | os.PathLike[str] | bytes, mime: str | None = None) -> dict[str, Any]:
    """An ``image_url`` content part: a URL as it is, or a file's (or raw bytes') image as a
    base64 ``data:`` URI (``mime`` from the file name, default ``image/png``)."""
    if isinstance(source, str) and source.startswith(("http://", "https://", "data:")):
        return {"type": "image_url", "image_url": {"url": source}}
    if isinstance(source, bytes):
        data, kind = source, mime or "image/png"
    else:
        path = Path(source)
        data, kind = path.read_bytes(), mime or mimetypes.guess_type(path.name)[0] or "image/png"
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{kind};base64,{base64.b64encode(data).decode()}"},
    }


def part_kind(part: Any) -> str:
    """A content part's ``type`` (``"text"``, ``"image_url"``, ...; ``"?"`` when it has none)."""
    return str(part.get("type")) if isinstance(part, dict) and part.get("type") else "?"


def text_only(messages: list[Message], where: str, model: str) -> list[Message]:
    """``messages`` as a text-only model takes them: each list of text parts joined into one
    string (other messages the same dicts). A part that is not text raises
    :class:`ContentNotSupportedError` naming ``where``, the message, the part and ``model``."""
    out = messages
    for i, m in enumerate(messages):
        content = m.get("content")
        if not isinstance(content, list):
            continue
        for j, part in enumerate(content):
            if part_kind(part) != "text":
                raise ContentNotSupportedError(
                    f"{where}: message {i} ({m.get('role')}) content part {j} is {part_kind(part)!r}, "
                    f"but {model} reads text only; nothing was sent (use a model that takes images, "
                    "or send text)"
                )
        if out is messages:
            out = list(messages)
        # Joined by newlines, as vLLM joins text parts for a text-only chat template.
        out[i] = {**m, "content": "\n".join(str(p.get("text", "")) for p in content)}
    return out
