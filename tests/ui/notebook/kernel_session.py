"""A live ipykernel driven message by message: run code, collect outputs, interrupt."""

from __future__ import annotations

import time
from typing import Any

from jupyter_client.manager import start_new_kernel


class KernelSession:
    """One kernel (kernelspec ``python3``) for a test; ``run`` returns stdout and widget updates."""

    def __init__(self, cwd: str) -> None:
        self.km, self.kc = start_new_kernel(kernel_name="python3", cwd=cwd)

    def send(self, code: str) -> str:
        return self.kc.execute(code)

    def collect(self, msg_id: str, timeout: float = 120) -> dict[str, Any]:
        """Wait for the cell to finish; its stdout, error, widget updates and rich outputs."""
        out: dict[str, Any] = {
            "stdout": "",
            "stderr": "",
            "error": None,
            "traceback": [],
            "updates": [],
            "html": [],
        }
        deadline = time.monotonic() + timeout
        while True:
            msg = self.kc.get_iopub_msg(timeout=max(0.1, deadline - time.monotonic()))
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                out[content["name"]] += content["text"]
            elif kind == "error":
                out["error"] = content["ename"]
                out["traceback"] = content["traceback"]
            elif kind == "comm_msg" and content["data"].get("method") == "update":
                out["updates"].append(content["data"]["state"])
            elif kind in ("display_data", "update_display_data", "execute_result"):
                out["html"].append(content["data"].get("text/html", ""))
            elif kind == "status" and content["execution_state"] == "idle":
                return out

    def run(self, code: str, timeout: float = 120) -> dict[str, Any]:
        out = self.collect(self.send(code), timeout)
        if out["error"]:
            raise AssertionError(f"cell failed with {out['error']}:\n{code}\n{out['stdout']}")
        return out

    def interrupt(self) -> None:
        self.km.interrupt_kernel()

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
