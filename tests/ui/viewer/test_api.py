"""The viewer's JSON API over a real ``vf-lite view`` process, on runs written by ``evaluate``."""

from __future__ import annotations

import http.client
import json
import math
import statistics
import subprocess
import sys
import urllib.parse
import urllib.request
from collections import Counter

import pytest
from scipy import stats

import verifiers_lite as vf
from tests.ui.viewer.helpers import run_id, stats_by_hand
from tests.ui.viewer.viewer_proc import ViewerProcess
from verifiers_lite.testing.waiting import wait_until

NAMES = ("arith-a", "arith-b", "calc", "errored", "xss")


def rows_of(viewer, name: str, **params) -> dict:
    return viewer.json(f"/api/runs/{run_id(name)}/rows?" + urllib.parse.urlencode(params))


def test_runs_page_lists_every_run_with_hand_computed_means(viewer, runs):
    listed = {r["run_id"]: r for r in viewer.json("/api/runs")["runs"]}
    assert set(listed) == {run_id(n) for n in NAMES}
    for name in NAMES:
        rows = runs["outputs"][name].rows
        hand = stats_by_hand(rows)
        r = listed[run_id(name)]
        assert r["num_rollouts"] == len(rows)
        assert r["reward_mean"] == pytest.approx(hand["mean"])
        assert r["num_errors"] == sum(hand["errors"].values())
        assert r["env_id"] == runs["outputs"][name].metadata["env_id"]
        assert r["model"] == runs["outputs"][name].metadata["model"]
        assert r["status"] == ("completed_with_errors" if hand["errors"] else "completed")


def test_run_page_statistics(viewer, runs):
    rows = runs["outputs"]["arith-a"].rows
    d = viewer.json(f"/api/runs/{run_id('arith-a')}")
    s = d["stats"]
    rewards = [r["reward"] for r in rows]
    n = len(rewards)
    mean = sum(rewards) / n
    # Clustered by example; every example has as many rollouts, so the standard error is that
    # of the per-example means.
    per_example: dict = {}
    for r in rows:
        per_example.setdefault(r["example_id"], []).append(r["reward"])
    means = [sum(v) / len(v) for v in per_example.values()]
    stderr = statistics.stdev(means) / math.sqrt(len(means))
    assert s["reward_mean"] == pytest.approx(mean) and s["reward_stderr"] == pytest.approx(stderr)
    assert s["reward_ci"][1] - s["reward_mean"] == pytest.approx(
        stats.t.ppf(0.975, len(means) - 1) * stderr
    )
    assert {b["lo"]: b["count"] for b in s["reward_histogram"]} == dict(Counter(rewards))
    # pass@1 is the mean pass rate per example; pass@3 with 3 rollouts: any of them passed
    by_ex: dict = {}
    for r in rows:
        by_ex.setdefault(r["example_id"], []).append(r["reward"] >= 1)
    assert s["pass_at_k"]["1"] == pytest.approx(
        sum(sum(v) / len(v) for v in by_ex.values()) / len(by_ex)
    )
    assert s["pass_at_k"]["3"] == pytest.approx(sum(any(v) for v in by_ex.values()) / len(by_ex))
    assert s["metrics_mean"]["correct"] == pytest.approx(
        sum(r["metrics"]["correct"] for r in rows) / n
    )
    assert d["metadata"]["sampling_args"] == runs["outputs"]["arith-a"].metadata["sampling_args"]
    assert d["metadata"]["env_args"] == runs["outputs"]["arith-a"].metadata["env_args"]
    err = viewer.json(f"/api/runs/{run_id('errored')}")["stats"]
    assert (
        err["errors"]
        == stats_by_hand(runs["outputs"]["errored"].rows)["errors"]
        == {"model_http_error": 3}
    )


def test_rows_page_through_the_file_in_order(viewer, runs):
    disk = runs["disk"]["arith-a"]  # the store's own reader, an independent parse of the file
    got = []
    for offset in range(0, len(disk), 7):
        page = rows_of(viewer, "arith-a", offset=offset, limit=7)
        assert page["total"] == len(disk)
        got += [(r["example_id"], r["rollout_index"], r["reward"]) for r in page["rows"]]
    assert got == [(r["example_id"], r["rollout_index"], r["reward"]) for r in disk]


def test_rows_sort_and_filters_match_a_hand_filter(viewer, runs):
    rows = runs["outputs"]["arith-a"].rows
    key = lambda r: (r["example_id"], r["rollout_index"])  # noqa: E731
    page = rows_of(viewer, "arith-a", sort="-reward", limit=500)["rows"]
    assert [r["reward"] for r in page] == sorted((r["reward"] for r in rows), reverse=True)
    hi = rows_of(viewer, "arith-a", min_reward=0.5, limit=500)
    assert {key(r) for r in hi["rows"]} == {key(r) for r in rows if r["reward"] >= 0.5}
    assert hi["total"] == sum(r["reward"] >= 0.5 for r in rows) and hi["num_rows"] == len(rows)
    lo = rows_of(viewer, "arith-a", max_reward=0.5, metric="correct", max_metric=0.5, limit=500)
    assert {key(r) for r in lo["rows"]} == {key(r) for r in rows if r["reward"] < 0.5}
    ex = rows_of(viewer, "arith-a", example_id=5)["rows"]
    assert sorted(r["rollout_index"] for r in ex) == [0, 1, 2] and {
        r["example_id"] for r in ex
    } == {5}
    question = rows[4]["prompt"][-1]["content"]  # a question's text, searched case-insensitively
    found = rows_of(viewer, "arith-a", q=question.upper(), limit=500)["rows"]
    assert {key(r) for r in found} == {
        key(r) for r in rows if r["prompt"][-1]["content"] == question
    }
    assert rows_of(viewer, "arith-a", stop_reason="length")["total"] == 0
    assert rows_of(viewer, "arith-a", stop_reason="stop")["total"] == len(rows)


def test_error_filters(viewer, runs):
    rows = runs["outputs"]["errored"].rows
    errored = rows_of(viewer, "errored", error="any")
    assert errored["total"] == 3 == sum(1 for r in rows if r["error"])
    assert {r["error_category"] for r in errored["rows"]} == {"model_http_error"}
    assert all("bad <b>args</b>" in r["error"] for r in errored["rows"])
    assert rows_of(viewer, "errored", error="model_http_error")["total"] == 3
    assert rows_of(viewer, "errored", error="none")["total"] == len(rows) - 3
    assert rows_of(viewer, "errored", error="model_timeout")["total"] == 0
    # an errored rollout has no reward: a reward filter leaves it out, sorting puts it last
    assert rows_of(viewer, "errored", min_reward=-1e9)["total"] == len(rows) - 3
    assert [r["error_category"] for r in rows_of(viewer, "errored", sort="reward")["rows"]][
        -3:
    ] == ["model_http_error"] * 3


def test_transcript_with_tool_call(viewer, runs):
    disk = runs["disk"]["calc"]
    target = disk[-1]
    d = viewer.json(
        f"/api/runs/{run_id('calc')}/rows/{target['example_id']}/{target['rollout_index']}"
    )
    assert d["row"] == json.loads(json.dumps(target))
    calls = [m for m in d["row"]["completion"] if m.get("tool_calls")]
    results = [m for m in d["row"]["completion"] if m["role"] == "tool"]
    assert calls and results and calls[0]["tool_calls"][0]["function"]["name"] == "calculator"
    assert d["rollout_indices"] == [0, 1]
    listed = rows_of(viewer, "calc", example_id=target["example_id"])["rows"]
    assert all(r["tool_calls"] == 1 for r in listed)
    assert viewer.get(f"/api/runs/{run_id('calc')}/rows/999/0")[0] == 404
    assert viewer.get("/api/runs/nope/rows/0/0")[0] == 404


def test_compare_two_runs_of_one_environment(viewer, runs):
    a, b = runs["outputs"]["arith-a"].rows, runs["outputs"]["arith-b"].rows

    def means(rows):
        acc: dict = {}
        for r in rows:
            acc.setdefault(str(r["example_id"]), []).append(r["reward"])
        return {k: sum(v) / len(v) for k, v in acc.items()}

    ma, mb = means(a), means(b)
    c = viewer.json(f"/api/compare?runs={run_id('arith-a')}&runs={run_id('arith-b')}")
    assert c["num_examples"] == len(ma)
    diffs = [e["diff"] for e in c["examples"]]
    assert [abs(x) for x in diffs] == sorted((abs(x) for x in diffs), reverse=True)
    for e in c["examples"]:
        assert e["means"] == pytest.approx([ma[e["example_id"]], mb[e["example_id"]]])
        assert e["diff"] == pytest.approx(mb[e["example_id"]] - ma[e["example_id"]])
    # The paired figures (vf.compare_runs'), checked against scipy's paired t-test; the runs
    # differ only in their model, so that labels them.
    assert [r["label"] for r in c["runs"]] == ["fake-arith", "fake-echo"]
    (p,) = c["paired"]
    d = [mb[k] - ma[k] for k in ma]
    ref = stats.ttest_rel([mb[k] for k in ma], [ma[k] for k in ma])
    ci = ref.confidence_interval(0.95)
    assert p["diff"] == pytest.approx(statistics.fmean(d)) and p["p_value"] == pytest.approx(
        ref.pvalue
    )
    assert p["stderr"] == pytest.approx(statistics.stdev(d) / math.sqrt(len(d)))
    assert p["ci"] == pytest.approx([ci.low, ci.high])
    assert (p["wins"], p["ties"], p["losses"]) == (
        sum(x > 0 for x in d),
        sum(x == 0 for x in d),
        sum(x < 0 for x in d),
    )
    assert (p["shared"], p["only_a"], p["only_b"], p["labels"]) == (
        len(d),
        [],
        [],
        ["fake-arith", "fake-echo"],
    )
    status, body = viewer.get(f"/api/compare?runs={run_id('arith-a')}&runs={run_id('calc')}")
    assert status == 422 and "one environment" in body["detail"]


@pytest.mark.parametrize(
    "query",
    [
        "offset=-1",
        "limit=0",
        "limit=100000",
        "limit=abc",
        "offset=1.5",
        "min_reward=abc",
        "max_metric=x",
        "sort=bogus",
        "sort=-prompt",
        "error=bogus",
        "stop_reason=exploded",
        "metric=nope",
        "min_metric=1",
        "min_reward=nan",
    ],
)
def test_malformed_query_parameters_are_422(viewer, query):
    status, body = viewer.get(f"/api/runs/{run_id('arith-a')}/rows?{query}")
    assert status == 422, (query, body)
    name = query.split("=")[0]
    assert name in json.dumps(body), f"the 422 for {query} does not name {name}: {body}"


def test_malformed_path_parameters_are_422(viewer):
    assert viewer.get(f"/api/runs/{run_id('calc')}/rows/0/first")[0] == 422
    assert viewer.get("/api/compare?runs=" + run_id("calc"))[0] == 422


@pytest.mark.parametrize(
    "path",
    [
        "/static/..%2F..%2F..%2F..%2Fetc%2Fpasswd",
        "/static/%2e%2e%2fapp.py",
        "/static/../app.py",
        "/static/..%2Fapp.py",
        "/api/runs/..%2F..%2F..%2F..%2Fetc",
        "/api/runs/%2E%2E/rows",
        "/api/runs/..%2Fevals~calc/rows/0/0",
        "/api/runs/evals~calc%2F..%2F..%2Fmetadata.json",
        "/etc/passwd",
        "/evals/calc/results.jsonl",
        "/api/runs/evals~calc/results.jsonl",
        "/api/runs/%2Fetc%2Fpasswd/rows",
    ],
)
def test_traversal_attempts_are_404(viewer, path):
    host, port = viewer.base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", path)  # sent verbatim: no client-side normalisation of ../
    resp = conn.getresponse()
    body = resp.read().decode(errors="replace")
    conn.close()
    assert resp.status == 404, (path, resp.status, body[:300])
    assert "root:" not in body and "_write_id" not in body


def test_page_and_assets_ship_in_the_package_with_a_strict_csp(viewer):
    with urllib.request.urlopen(viewer.base + "/", timeout=30) as resp:
        csp = resp.headers["content-security-policy"]
        page = resp.read().decode()
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "http" not in page.replace(viewer.base, "")  # no CDN: everything from this server
    for asset in ("app.js", "app.css"):
        status, body = viewer.get(f"/static/{asset}")
        assert status == 200 and "https://" not in body


def test_only_loopback_host_names_are_answered(viewer):
    status, _ = viewer.get("/api/runs", headers={"Host": "attacker.example:80"})
    assert status == 403
    assert viewer.get("/api/runs", headers={"Host": "localhost"})[0] == 200


def test_token_required_on_every_request(runs):
    with ViewerProcess(str(runs["root"]), args=("--token",)) as v:
        token = urllib.parse.parse_qs(urllib.parse.urlsplit(v.url).query)["token"][0]
        assert len(token) >= 20
        for path in ("/", "/static/app.js", "/api/runs", f"/api/runs/{run_id('calc')}/rows"):
            assert v.get(path)[0] == 401, path
            assert v.get(path + ("&" if "?" in path else "?") + "token=wrong")[0] == 401
            assert v.get(path, headers={"Authorization": "Bearer " + token})[0] == 200
        assert v.get(f"/api/runs?token={token}")[0] == 200
        req = urllib.request.Request(v.base + f"/?token={token}")
        with urllib.request.urlopen(req, timeout=30) as resp:
            cookie = resp.headers["set-cookie"].split(";")[0]
            assert "HttpOnly" in resp.headers["set-cookie"]
        assert v.get("/api/runs", headers={"Cookie": cookie})[0] == 200
        # with a token, the Host header does not matter (it may be served to other machines)
        assert (
            v.get("/api/runs", headers={"Host": "viewer.lan", "Authorization": f"Bearer {token}"})[
                0
            ]
            == 200
        )


def test_other_host_without_token_is_refused_before_serving(runs):
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "verifiers_lite.cli",
            "view",
            str(runs["root"]),
            "--host",
            "0.0.0.0",
            "--no-browser",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "--token" in proc.stderr and "serving" not in proc.stdout
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "verifiers_lite.cli",
            "view",
            str(runs["root"] / "missing"),
            "--no-browser",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and "missing" in proc.stderr


def test_run_written_live_is_followed(tmp_path, runs):
    """A run in progress (evaluate in another process, slow model) shows as running, its rows
    grow while it runs, and it ends completed with every row."""
    from verifiers_lite.testing.fake_server import FakeServerProcess

    n_examples, per = 12, 2
    script = (
        "import sys, verifiers_lite as vf\n"
        f"env = vf.load_environment('arithmetic', num_examples={n_examples})\n"
        f"env.evaluate_sync(vf.ChatClient(sys.argv[1]), 'fake-arith', num_examples={n_examples}, "
        f"rollouts_per_example={per}, max_concurrent=2, results_path=sys.argv[2], progress=False)\n"
    )
    with FakeServerProcess(latency_ms=150) as slow, ViewerProcess(str(tmp_path)) as v:
        proc = subprocess.Popen(
            [sys.executable, "-c", script, slow.base_url, str(tmp_path / "live")]
        )
        try:

            def partial():
                listed = v.json("/api/runs")["runs"]
                if not listed or listed[0]["status"] != "running":
                    return None
                page = v.json("/api/runs/live/rows?limit=500")
                return page if 0 < page["total"] < n_examples * per else None

            first = wait_until(partial, "a part of the run listed while it runs", timeout=60)
            assert first["total"] % per == 0  # whole groups only
            grown = wait_until(
                lambda: (
                    (p := v.json("/api/runs/live/rows?limit=500"))["total"] > first["total"] and p
                ),
                "more rows listed",
                timeout=60,
            )
            assert grown["rows"][: first["total"]] == first["rows"]  # rows already shown stay put
            assert proc.wait(timeout=120) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
        done = wait_until(
            lambda: (r := v.json("/api/runs")["runs"][0])["status"] == "completed" and r,
            "the run listed as completed",
        )
        final = v.json("/api/runs/live/rows?limit=500")
        assert done["num_rollouts"] == final["total"] == n_examples * per
        assert final["status"] == "completed"
        assert vf.load_results(tmp_path / "live").summary["reward_mean"] == pytest.approx(
            done["reward_mean"]
        )


def test_compare_of_runs_with_other_inputs_under_the_same_ids(tmp_path):
    """Per-example table still; no paired figures, the reason instead (a paired difference of
    different questions would mean nothing)."""
    for name, question in (("a", "What is {} + 1?"), ("b", "What is {} + 2?")):
        rows = [
            {
                "example_id": i,
                "rollout_index": 0,
                "prompt": [{"role": "user", "content": question.format(i)}],
                "answer": "1",
                "reward": float(i % 2),
            }
            for i in range(3)
        ]
        vf.GenerateOutputs(rows, {"env_id": "toy", "model": "m"}).save(tmp_path / name)
    with ViewerProcess(str(tmp_path)) as v:
        c = v.json("/api/compare?runs=a&runs=b")
    assert (
        c["paired"] == []
        and "different inputs under the same example ids (3 of 3" in c["paired_error"]
    )
    assert c["num_examples"] == 3
