"""Hub datasets answered from files shipped with the corpus (nothing downloads at run time).

Classic environments call ``datasets.load_dataset("owner/name", config, split=...)`` while they
load. ``install()`` replaces ``datasets.load_dataset`` with :func:`load_local`, which reads
``corpus/data/<owner>__<name>[__<config>]/<split>.jsonl``: the same columns as the hub dataset,
a few rows written for these tests. It is installed before ``verifiers`` or an environment module
is imported, so ``from datasets import load_dataset`` binds to it too. Runs under both the
verifiers 0.3.1 venv and verifiers_lite's (standard library and ``datasets`` only).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

DATA_DIR = Path(__file__).resolve().parent / "corpus" / "data"
_SLICE = re.compile(r"^(?P<split>[\w-]+)(\[(?P<start>\d*):(?P<stop>\d*)(?P<pct>%?)\])?$")


class LocalDatasetMissing(FileNotFoundError):
    """A hub dataset the corpus ships no local copy of."""


def dataset_dir(path: str, name: str | None = None) -> Path:
    """Where the local copy of hub dataset ``path`` (config ``name``) lies."""
    folder = path.replace("/", "__") + (f"__{name}" if name and name != "default" else "")
    return DATA_DIR / folder


def _read_split(folder: Path, split: str) -> Any:
    from datasets import Dataset

    file = folder / f"{split}.jsonl"
    if not file.is_file():
        raise LocalDatasetMissing(f"no local split {split!r} for {folder.name} (looked for {file})")
    rows = [json.loads(line) for line in file.read_text().splitlines() if line.strip()]
    return Dataset.from_list(rows)


def _sliced(dataset: Any, spec: re.Match[str]) -> Any:
    if spec.group("start") is None:
        return dataset
    n = len(dataset)
    scale = (lambda v: n * int(v) // 100) if spec.group("pct") else int
    start = scale(spec.group("start")) if spec.group("start") else 0
    stop = scale(spec.group("stop")) if spec.group("stop") else n
    return dataset.select(range(start, min(stop, n)))


def load_local(path: str, name: str | None = None, split: str | None = None, **_: Any) -> Any:
    """``datasets.load_dataset``'s answer for the corpus: a Dataset for ``split`` (``train``,
    ``train[:10%]``, ``test[2:5]``), else a DatasetDict of every split shipped."""
    from datasets import DatasetDict

    folder = dataset_dir(path, name)
    if not folder.is_dir():
        raise LocalDatasetMissing(
            f"the corpus ships no local copy of hub dataset {path!r} (config {name!r})"
        )
    if split is None:
        return DatasetDict(
            {f.stem: _read_split(folder, f.stem) for f in sorted(folder.glob("*.jsonl"))}
        )
    spec = _SLICE.match(split)
    if spec is None:
        raise ValueError(f"unsupported split expression {split!r}")
    return _sliced(_read_split(folder, spec.group("split")), spec)


def install() -> None:
    """Make ``datasets.load_dataset`` read the corpus's local copies (for this process)."""
    import datasets

    datasets.load_dataset = load_local  # type: ignore[assignment]
    try:
        import datasets.load as datasets_load

        datasets_load.load_dataset = load_local  # type: ignore[assignment]
    except ImportError:
        pass
