"""Reading a small PNG with the standard library only: what the fake vision model sees."""

from __future__ import annotations

import base64
import struct
import zlib
from collections import Counter

_SIGNATURE = b"\x89PNG\r\n\x1a\n"
_CHANNELS = {0: 1, 2: 3, 4: 2, 6: 4}  # colour type -> samples per pixel (8-bit, no palette)
COLOURS = {
    "black": (0, 0, 0),
    "white": (255, 255, 255),
    "red": (220, 30, 30),
    "green": (30, 160, 50),
    "blue": (30, 60, 220),
    "yellow": (240, 220, 40),
    "orange": (245, 140, 20),
    "purple": (130, 50, 170),
    "grey": (128, 128, 128),
}


def decode_png(data: bytes) -> tuple[int, int, list[tuple[int, int, int]]]:
    """``(width, height, rgb pixels row by row)`` of an 8-bit, non-interlaced greyscale, RGB or
    RGBA PNG; ValueError for anything else."""
    if not data.startswith(_SIGNATURE):
        raise ValueError("not a PNG")
    pos, idat, header = len(_SIGNATURE), b"", None
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        chunk = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        elif kind == b"IEND":
            break
    if header is None:
        raise ValueError("PNG without IHDR")
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in _CHANNELS or interlace:
        raise ValueError(
            f"unsupported PNG (bit depth {depth}, colour type {colour}, interlace {interlace})"
        )
    channels = _CHANNELS[colour]
    rows = _unfilter(zlib.decompress(idat), width * channels, height, channels)
    pixels = []
    for row in rows:
        for x in range(width):
            px = row[x * channels : (x + 1) * channels]
            pixels.append((px[0], px[0], px[0]) if channels < 3 else (px[0], px[1], px[2]))
    return width, height, pixels


def _unfilter(raw: bytes, stride: int, height: int, bpp: int) -> list[bytearray]:
    """The scanlines with PNG's per-line filters (none, sub, up, average, Paeth) undone."""
    rows: list[bytearray] = []
    prev = bytearray(stride)
    for y in range(height):
        start = y * (stride + 1)
        kind, line = raw[start], bytearray(raw[start + 1 : start + 1 + stride])
        for i in range(stride):
            left = line[i - bpp] if i >= bpp else 0
            up, corner = prev[i], prev[i - bpp] if i >= bpp else 0
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                line[i] = (line[i] + _paeth(left, up, corner)) & 0xFF
        rows.append(line)
        prev = line
    return rows


def _paeth(a: int, b: int, c: int) -> int:
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    return a if pa <= pb and pa <= pc else b if pb <= pc else c


def colour_name(pixels: list[tuple[int, int, int]]) -> str:
    """The named colour nearest the pixels' mean."""
    n = max(1, len(pixels))
    mean = tuple(sum(p[i] for p in pixels) / n for i in range(3))
    return min(
        COLOURS,
        key=lambda name: sum((a - b) ** 2 for a, b in zip(COLOURS[name], mean, strict=True)),
    )


def nearest_colour(pixel: tuple[int, int, int]) -> str:
    """The named colour nearest one pixel."""
    return min(
        COLOURS,
        key=lambda name: sum((a - b) ** 2 for a, b in zip(COLOURS[name], pixel, strict=True)),
    )


def dominant_colour(width: int, height: int, pixels: list[tuple[int, int, int]]) -> str:
    """What a person would name the image by: the most common colour that is not the
    background (the colour most of the border has), when it covers at least 1% of the image;
    else the background. A red circle on white is red; a plain blue image is blue."""
    names = [nearest_colour(p) for p in pixels]
    border = [
        names[y * width + x]
        for y in range(height)
        for x in range(width)
        if x in (0, width - 1) or y in (0, height - 1)
    ]
    background = Counter(border).most_common(1)[0][0] if border else None
    figure = Counter(n for n in names if n != background).most_common(1)
    if figure and figure[0][1] >= 0.01 * len(names):
        return figure[0][0]
    return background or colour_name(pixels)


def data_uri_colour(url: str) -> str:
    """The dominant colour (:func:`dominant_colour`) of a ``data:image/png;base64,...`` URI's
    image; ValueError when it is not one."""
    head, _, payload = url.partition(",")
    if not (head.startswith("data:image/png") and head.endswith(";base64")):
        raise ValueError("not a base64 PNG data URI")
    return dominant_colour(*decode_png(base64.b64decode(payload)))
