"""One self-contained HTML file of a run: the viewer's page with its script, styles and every
row inlined (no server, no network), to share or attach."""

from __future__ import annotations

import json
import os
import re
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from verifiers_lite.ui.viewer.rows import json_safe, row_summary, strip_token_ids
from verifiers_lite.ui.viewer.runs import RunRegistry

if TYPE_CHECKING:
    from verifiers_lite.results.outputs import GenerateOutputs

_CSS_LINK = '<link rel="stylesheet" href="static/app.css">'
_JS_TAG = '<script src="static/app.js"></script>'


def _asset(name: str) -> str:
    from importlib import resources

    return (resources.files("verifiers_lite.ui.viewer") / "static" / name).read_text(
        encoding="utf-8"
    )


def run_slug(outputs: GenerateOutputs) -> str:
    """A directory name for a run: ``env--model``."""
    name = f"{outputs.metadata.get('env_id') or 'run'}--{outputs.metadata.get('model') or 'model'}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_")[:80] or "run"


def _data(outputs: GenerateOutputs, label: str) -> dict[str, Any]:
    """What the page's API calls would return, computed by the server's own code paths."""
    with tempfile.TemporaryDirectory(prefix="vf-html-") as tmp:
        run_dir = Path(tmp) / run_slug(outputs)
        outputs.save(run_dir)
        run = RunRegistry([run_dir]).refresh()[0]
        run.index.scan()
        rows = run.index.read(list(range(len(run.index))))
        detail, summary = run.detail(), run.summary()
    status = outputs.metadata.get("status") or "saved"  # not a live run: no running/stale guess
    detail.update(path=label, status=status)
    summary["status"] = status
    items = []
    for r in rows:
        strip_token_ids(r)
        items.append({"s": row_summary(r), "r": r})
    return json_safe(
        {"runs": [summary], "details": {run.run_id: detail}, "rows": {run.run_id: items}}
    )


def standalone_html(outputs: GenerateOutputs, label: str = "") -> str:
    """The page as one string. Data travel as JSON in a non-executable script element, with
    every ``<`` escaped so no text a model wrote can close that element."""
    payload = json.dumps(_data(outputs, label), ensure_ascii=False, allow_nan=False).replace(
        "<", "\\u003c"
    )
    js, css = _asset("app.js"), _asset("app.css")
    if "</script" in js.lower() or "</style" in css.lower():
        raise RuntimeError("viewer assets cannot be inlined: they contain a closing tag")
    page = _asset("index.html")
    page = page.replace(_CSS_LINK, f"<style>{css}</style>")
    return page.replace(
        _JS_TAG,
        f'<script id="vf-data" type="application/json">{payload}</script>\n<script>{js}</script>',
    )


def write_html(outputs: GenerateOutputs, path: str | os.PathLike[str]) -> Path:
    """Write :func:`standalone_html` to ``path`` (parents created); returns the path."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(standalone_html(outputs, target.name), encoding="utf-8")
    return target
