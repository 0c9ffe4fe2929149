"""The program the interception benchmark runs: N chat calls on one keep-alive connection.

``python benchmarks/_program_caller.py N OUT``: calls ``OPENAI_BASE_URL``'s chat route N times
(plain ``http.client``, so the program's own cost is small and the same either way) and writes
each call's latency in milliseconds to OUT as JSON.
"""

from __future__ import annotations

import http.client
import json
import os
import sys
import time
from urllib.parse import urlsplit


def main() -> None:
    calls, out = int(sys.argv[1]), sys.argv[2]
    url = urlsplit(os.environ["OPENAI_BASE_URL"])
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    headers = {
        "Content-Type": "application/json",
        "Authorization": f"Bearer {os.environ['OPENAI_API_KEY']}",
    }
    body = json.dumps(
        {"model": "fake-echo", "messages": [{"role": "user", "content": "What is 2 + 3?"}]}
    )
    latencies = []
    for _ in range(calls):
        t0 = time.perf_counter()
        conn.request("POST", url.path.rstrip("/") + "/chat/completions", body, headers)
        response = conn.getresponse()
        response.read()
        latencies.append((time.perf_counter() - t0) * 1000)
        if response.status != 200:
            raise SystemExit(f"HTTP {response.status}")
    with open(out, "w") as fh:
        json.dump(latencies, fh)
    print("ok")


if __name__ == "__main__":
    main()
