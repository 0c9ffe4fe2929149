"""``vf-lite`` end to end in a subprocess: exit codes, the summary, files written, bad arguments."""

from __future__ import annotations

import json
import os
import urllib.request

import pytest

from tests.cli.helpers import run_dir, vf_lite
from verifiers_lite.cli import main


def test_eval_against_fake_server_prints_summary_and_writes_files(fake_server, tmp_path):
    r = vf_lite(
        "eval",
        "arithmetic",
        "-b",
        fake_server.base_url,
        "-m",
        "fake-arith",
        "-n",
        "6",
        "-r",
        "3",
        "-c",
        "4",
        "-T",
        "0.7",
        "-t",
        "20",
        "-s",
        str(tmp_path / "out"),
        "--seed",
        "5",
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    for needle in (
        "reward",
        "± ",
        "pass@1",
        "pass@3",
        "errors",
        "none",
        "tokens",
        "wall time",
        "results",
        "plot",
    ):
        assert needle in out, (needle, out)
    assert "  correct" in out and "  answered" in out
    assert "rollouts" in r.stderr and "18/18" in r.stderr  # the tqdm progress bar
    run = run_dir(tmp_path / "out")
    assert run.parent.name == "arithmetic--fake-arith"
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    assert len(rows) == 18
    meta = json.loads((run / "metadata.json").read_text())
    assert meta["env_args"] == {"seed": 5} and meta["sampling_args"] == {
        "max_tokens": 20,
        "temperature": 0.7,
    }
    summary = json.loads((run / "summary.json").read_text())
    assert summary["num_rollouts"] == 18 and set(summary["pass_at_k"]) == {"1", "2", "3"}
    png = run / "reward_hist.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and str(png) in out
    assert fake_server.stats()["max_in_flight"] <= 4


def test_eval_without_model_against_several_is_a_usage_error_naming_them(fake_server, tmp_path):
    root = tmp_path / "out"
    r = vf_lite(
        "eval",
        "guess_number",
        "-b",
        fake_server.base_url,
        "-n",
        "3",
        "-r",
        "1",
        "-q",
        "-s",
        str(root),
        cwd=tmp_path,
    )
    assert r.returncode == 2, r.stderr
    listed = json.loads(urllib.request.urlopen(f"{fake_server.base_url}/models", timeout=5).read())[
        "data"
    ]
    names = [m["id"] for m in listed]
    assert len(names) > 1 and "fake-guess" in names  # several: the usage error must name each
    assert all(n in r.stderr for n in names) and "-m MODEL" in r.stderr, r.stderr
    assert fake_server.stats()["requests"] == 0 and not root.exists()


def test_eval_uses_and_prints_the_one_listed_model_and_resumes_with_it(fake_server, tmp_path):
    from verifiers_lite.testing.fake_server import FakeServerProcess

    root = tmp_path / "out"
    with FakeServerProcess(models=["fake-guess"]) as one:
        r = vf_lite(
            "eval",
            "guess_number",
            "-b",
            one.base_url,
            "-n",
            "3",
            "-r",
            "1",
            "-q",
            "-a",
            '{"high": 10}',
            "-s",
            str(root),
            cwd=tmp_path,
        )
        assert r.returncode == 0, r.stderr
        assert "using 'fake-guess', the one model" in r.stderr
    run = run_dir(root)
    assert run.parent.name == "guess_number--fake-guess"
    rows = [json.loads(x) for x in (run / "results.jsonl").read_text().splitlines()]
    # fake-guess bisects on 1..10: it finds every secret within the turn budget
    assert [r["metrics"]["solved"] for r in rows] == [1.0, 1.0, 1.0]
    # Another endpoint than the run's is refused before any request, naming both...
    before = fake_server.stats()["requests"]
    resume = (
        "eval",
        "guess_number",
        "-b",
        fake_server.base_url,
        "-q",
        "--resume",
        str(run),
        "-s",
        str(root),
    )
    r = vf_lite(*resume, cwd=tmp_path)
    assert r.returncode == 2 and one.base_url in r.stderr and fake_server.base_url in r.stderr, (
        r.stderr
    )
    assert "--allow-client-change" in r.stderr and fake_server.stats()["requests"] == before
    # ...unless allowed: the resume goes on with the run's model, even against an endpoint that lists several.
    r = vf_lite(*resume, "--allow-client-change", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert fake_server.stats()["requests"] == before  # all done: nothing rerun
    assert "3 (3 examples x 1)" in r.stdout and "model fake-guess" in r.stdout
    # The resumed run's wall time is its two sessions' summed (the second ran nothing).
    assert "resumed: 2 sessions summed" in r.stdout
    meta = json.loads((run / "metadata.json").read_text())
    summary = json.loads((run / "summary.json").read_text())
    assert [s["rollouts"] for s in meta["sessions"]] == [3, 0] and meta["resumed"] is True
    assert [[e["endpoint"] for e in s["manifest"]["endpoints"]] for s in meta["sessions"]] == [
        [one.base_url],
        [fake_server.base_url],
    ]  # each session's endpoint, the first never overwritten
    assert (
        summary["wall_time_s"]
        == meta["duration_s"]
        == sum(s["duration_s"] for s in meta["sessions"])
    )


def test_eval_with_adaptive_concurrency_and_a_token_budget(fake_server, tmp_path):
    r = vf_lite(
        "eval",
        "arithmetic",
        "-b",
        fake_server.base_url,
        "-m",
        "fake-arith",
        "-n",
        "30",
        "-r",
        "1",
        "-c",
        "auto",
        "--max-tokens-total",
        "300",
        "-q",
        "-s",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert r.returncode == 0, r.stderr
    meta = json.loads((run_dir(tmp_path / "out") / "metadata.json").read_text())
    assert meta["max_concurrent"] == "auto" and meta["endpoints"][0]["adaptive"]["limit"] >= 1
    stopped = meta["budget"]["stopped"]
    assert stopped.startswith("budget (tokens ")
    rows = (run_dir(tmp_path / "out") / "results.jsonl").read_text().splitlines()
    assert 0 < len(rows) < 30
    for needle in (stopped, "concurrency", "auto; ", "cost", "unpriced"):
        assert needle in r.stdout, (needle, r.stdout)


def test_eval_with_two_endpoints_spreads_groups(fake_server, tmp_path):
    from verifiers_lite.testing.fake_server import FakeServerProcess

    with FakeServerProcess() as other:
        r = vf_lite(
            "eval",
            "arithmetic",
            "-b",
            fake_server.base_url,
            "-b",
            other.base_url,
            "-m",
            "fake-arith",
            "-n",
            "6",
            "-r",
            "2",
            "-q",
            "-s",
            str(tmp_path / "out"),
            cwd=tmp_path,
        )
        assert r.returncode == 0, r.stderr
        assert fake_server.stats()["requests"] == 6 and other.stats()["requests"] == 6


def test_eval_on_ray_workers(fake_server, tmp_path):
    pytest.importorskip("ray", reason="Ray is an optional extra: pip install 'verifiers_lite[ray]'")
    r = vf_lite(
        "eval",
        "arithmetic",
        "-b",
        fake_server.base_url,
        "-m",
        "fake-arith",
        "-n",
        "6",
        "-r",
        "2",
        "-s",
        str(tmp_path / "out"),
        "--ray-workers",
        "2",
        "-q",
        cwd=tmp_path,
        timeout=180,
    )
    assert r.returncode == 0, r.stderr
    meta = json.loads((run_dir(tmp_path / "out") / "metadata.json").read_text())
    assert meta["executor"] == "ray" and sum(w["units"] for w in meta["workers"]) == 6
    assert "pass@2" in r.stdout


def test_all_rollouts_failing_exits_non_zero(tmp_path):
    from verifiers_lite.testing.fake_server import free_port

    r = vf_lite(
        "eval",
        "arithmetic",
        "-b",
        f"http://127.0.0.1:{free_port()}/v1",
        "-m",
        "x",
        "-n",
        "2",
        "-r",
        "1",
        "-q",
        "--timeout",
        "5",
        "-s",
        str(tmp_path / "out"),
        cwd=tmp_path,
    )
    assert r.returncode == 1
    assert "all 2 rollouts failed" in r.stderr and "model_connection" in r.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["eval", "no_such_env"],
            "unknown environment 'no_such_env'; available: arithmetic, calculator",
        ),
        (["eval", "arithmetic", "-a", "{not json"], "--env-args is not valid JSON"),
        (["eval", "arithmetic", "-a", "[1, 2]"], "--env-args must be a JSON object"),
        (["eval", "arithmetic", "-a", '{"bogus": 1}'], "does not take ['bogus']"),
        (["eval", "arithmetic", "-n", "0"], "--num-examples must be >= 1"),
        (["eval", "arithmetic", "-r", "0"], "--rollouts-per-example must be >= 1"),
        (["eval", "arithmetic", "-c", "0"], "--max-concurrent must be >= 1"),
        (["eval", "arithmetic", "--max-wall-s", "0"], "--max-wall-s must be a positive number"),
        (["eval", "arithmetic", "--max-cost-usd", "-1"], "--max-cost-usd must be a positive"),
        (["eval", "arithmetic", "-b", "localhost:8000"], "--base-url must be an http(s) URL"),
        (["eval", "arithmetic", "--parallel", "0"], "--parallel must be >= 1"),
        (["eval", "arithmetic", "--gguf", "/nonexistent/model.gguf"], "GGUF model not found"),
        (["eval", "arithmetic", "--resume", "/nonexistent/run"], "holds no run"),
        (["eval", "arithmetic", "--ray-address", "auto"], "--ray-address needs --ray-workers N"),
        (["eval", "arithmetic", "--ray-workers", "0"], "--ray-workers must be >= 1"),
    ],
)
def test_bad_arguments_exit_non_zero_with_a_clear_message(args, message, tmp_path, capsys):
    code = main([*args, "-s", str(tmp_path)])
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_hosted_model_without_a_key_is_a_clear_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    code = main(
        ["eval", "arithmetic", "-m", "gpt-4.1-mini", "-k", "NO_SUCH_KEY_VAR", "-s", str(tmp_path)]
    )
    assert code == 2 and "$NO_SUCH_KEY_VAR" in capsys.readouterr().err


def test_argparse_errors_and_list(capsys):
    with pytest.raises(SystemExit) as info:
        main(["eval", "arithmetic", "-n", "three"])
    assert info.value.code == 2 and "invalid int value" in capsys.readouterr().err
    with pytest.raises(SystemExit) as info:
        main(["eval", "arithmetic", "-c", "fast"])
    assert info.value.code == 2
    assert "expected a number or 'auto', got 'fast'" in capsys.readouterr().err
    assert main(["list"]) == 0
    listed = capsys.readouterr().out.split()
    assert {"arithmetic", "calculator", "guess_number", "reasoning_gym"} <= set(listed)
    assert main([]) == 2


def test_serve_delegates_to_the_server_cli(capsys):
    with pytest.raises(SystemExit) as info:
        main(["serve", "--help"])
    assert info.value.code == 0
    assert "usage" in capsys.readouterr().out.lower()


@pytest.mark.local_model
@pytest.mark.slow
def test_eval_against_the_embedded_model(tmp_path):
    pytest.importorskip("llama_cpp")
    r = vf_lite(
        "eval",
        "arithmetic",
        "-n",
        "3",
        "-r",
        "2",
        "--parallel",
        "2",
        "--threads",
        "1",
        "-s",
        str(tmp_path / "out"),
        cwd=tmp_path,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr
    assert "SmolLM2-135M-Instruct" in r.stdout and "pass@2" in r.stdout
    run = run_dir(tmp_path / "out")
    assert (run / "reward_hist.png").exists() and len(
        (run / "results.jsonl").read_text().splitlines()
    ) == 6
    meta = json.loads((run / "metadata.json").read_text())
    ports = [str(e["name"]).rsplit(":", 1)[1].split("/")[0] for e in meta["endpoints"]]
    assert len(ports) == 2 and "2 process(es) x 1 thread(s)" in r.stderr  # --parallel 2
    # the embedded servers were stopped with the CLI
    assert not [
        p for p in os.listdir("/proc") if p.isdigit() and _is_llama_server_of(int(p), ports)
    ]


def _is_llama_server_of(pid: int, ports: list[str]) -> bool:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            args = f.read().split(b"\0")
    except OSError:
        return False
    return b"verifiers_lite.local.llama_server" in args and any(p.encode() in args for p in ports)
