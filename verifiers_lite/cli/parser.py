"""The ``vf-lite`` command line: subcommands, options and their defaults."""

from __future__ import annotations

import argparse

from verifiers_lite.cli.cache import add_cache_parser
from verifiers_lite.cli.compare import add_compare_parser
from verifiers_lite.cli.export import add_export_parser
from verifiers_lite.cli.rescore import add_rescore_parser

DEFAULT_SAVE_DIR = "outputs/evals"
DEFAULT_NUM_EXAMPLES = 10
DEFAULT_ROLLOUTS = 4
DEFAULT_CONCURRENCY = 32
DEFAULT_MAX_ERROR_RATE = 0.1
OPENAI_BASE_URL = "https://api.openai.com/v1"


def build_parser() -> argparse.ArgumentParser:
    """``vf-lite`` and its subcommands, each with its options."""
    parser = argparse.ArgumentParser(prog="vf-lite", description="verifiers_lite command line")
    sub = parser.add_subparsers(
        dest="command", metavar="{eval,compare,list,init,view,serve,rescore,cache,export}"
    )
    _add_eval_parser(sub)
    sub.add_parser("list", help="list the bundled and installed environments")
    add_compare_parser(sub)
    add_cache_parser(sub)
    add_rescore_parser(sub)
    add_export_parser(sub)
    _add_init_parser(sub)
    _add_view_parser(sub)
    sv = sub.add_parser(
        "serve", help="run a rollout server (see `vf-lite serve --help`)", add_help=False
    )
    sv.add_argument("rest", nargs=argparse.REMAINDER)
    return parser


def _add_eval_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    ev = sub.add_parser(
        "eval",
        help="evaluate an environment against a model",
        description="Evaluate ENV_ID against a model. With no --model/--base-url the embedded "
        "SmolLM2-135M (llama.cpp, 127.0.0.1) is started and stopped for you.",
    )
    ev.add_argument(
        "env_id",
        metavar="ENV_ID",
        nargs="+",
        help="bundled environment id (see `vf-lite list`) or an installed module; several ids "
        "run as one group (vf.EnvGroup), reported per task",
    )
    _add_model_options(ev)
    _add_run_options(ev)
    _add_budget_options(ev)
    _add_resume_options(ev)
    _add_embedded_model_options(ev)
    _add_scale_and_output_options(ev)


def _add_model_options(ev: argparse.ArgumentParser) -> None:
    """Which model answers: a name, an OpenAI-compatible endpoint and its key."""
    ev.add_argument(
        "-m",
        "--model",
        help="model name (default: the embedded model; with -b, the server's first model)",
    )
    ev.add_argument(
        "-b",
        "--base-url",
        action="append",
        default=None,
        metavar="URL",
        help="OpenAI-compatible base URL, e.g. http://host:8000/v1; repeat for many endpoints "
        "(each example's rollouts stay on one endpoint)",
    )
    ev.add_argument(
        "-k",
        "--api-key-var",
        default="OPENAI_API_KEY",
        metavar="VAR",
        help="environment variable holding the API key (default: OPENAI_API_KEY)",
    )


def _concurrency(text: str) -> int | str:
    """``-c``: a number, or ``auto``."""
    if text.strip().lower() == "auto":
        return "auto"
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number or 'auto', got {text!r}") from None


def _add_run_options(ev: argparse.ArgumentParser) -> None:
    """How much to run and how: examples, rollouts, concurrency, sampling, where to save."""
    ev.add_argument(
        "-n",
        "--num-examples",
        type=int,
        default=None,
        help=f"examples to evaluate, -1 for all (default: {DEFAULT_NUM_EXAMPLES})",
    )
    ev.add_argument(
        "-r",
        "--rollouts-per-example",
        type=int,
        default=None,
        help=f"rollouts per example (default: {DEFAULT_ROLLOUTS})",
    )
    ev.add_argument(
        "-c",
        "--max-concurrent",
        type=_concurrency,
        default=DEFAULT_CONCURRENCY,
        metavar="N|auto",
        help=f"model requests in flight, or 'auto': each endpoint's own limit, adapted to its "
        f"throughput, 429s and latency (default: {DEFAULT_CONCURRENCY})",
    )
    ev.add_argument(
        "-t",
        "--max-tokens",
        type=int,
        default=None,
        help="max completion tokens per turn (default: the env's)",
    )
    ev.add_argument(
        "-T",
        "--temperature",
        type=float,
        default=None,
        help="sampling temperature (default: the server's)",
    )
    ev.add_argument(
        "-a",
        "--env-args",
        default=None,
        metavar="JSON",
        help="environment arguments as a JSON object, e.g. '{\"digits\": 2}'",
    )
    ev.add_argument(
        "-s",
        "--save-dir",
        default=DEFAULT_SAVE_DIR,
        help=f"root directory of results (default: {DEFAULT_SAVE_DIR})",
    )


def _add_budget_options(ev: argparse.ArgumentParser) -> None:
    """The run's budgets: money, tokens, wall time."""
    ev.add_argument(
        "--max-cost-usd",
        type=float,
        default=None,
        metavar="USD",
        help="run budget in US dollars: no new rollout starts once it would be passed "
        "(needs a priced model); a resume with a larger one goes on",
    )
    ev.add_argument(
        "--max-tokens-total",
        type=int,
        default=None,
        metavar="N",
        help="run budget in tokens (prompt and completion, every session of the run)",
    )
    ev.add_argument(
        "--max-wall-s",
        type=float,
        default=None,
        metavar="SECONDS",
        help="run budget in seconds of wall time (every session of the run)",
    )


def _add_resume_options(ev: argparse.ArgumentParser) -> None:
    """Going on with a saved run, and when a run counts as failed."""
    ev.add_argument(
        "--resume",
        nargs="?",
        const="latest",
        default=None,
        metavar="RUN_DIR",
        help="continue an interrupted run: RUN_DIR, or the latest run of this env and model",
    )
    ev.add_argument(
        "--keep-errors",
        action="store_true",
        help="with --resume: keep errored rollouts instead of rerunning them",
    )
    ev.add_argument(
        "--allow-client-change",
        action="store_true",
        help="with --resume: go on with another model endpoint or client than the run's "
        "(refused otherwise); each row records the session that made it",
    )
    ev.add_argument(
        "--max-error-rate",
        type=float,
        default=DEFAULT_MAX_ERROR_RATE,
        metavar="FRACTION",
        help="exit 1 when more than this fraction of rollouts failed "
        f"(default: {DEFAULT_MAX_ERROR_RATE}; 0 = any failure)",
    )
    ev.add_argument(
        "--seed",
        type=int,
        default=None,
        help="data seed, passed to the environment's load_environment(seed=...)",
    )


def _add_embedded_model_options(ev: argparse.ArgumentParser) -> None:
    """The embedded llama.cpp server, when no endpoint is given."""
    ev.add_argument(
        "--gguf", default=None, metavar="PATH", help="serve this GGUF instead of the embedded model"
    )
    ev.add_argument(
        "--n-ctx",
        type=int,
        default=2048,
        help="context size of the embedded server (default: 2048)",
    )
    ev.add_argument(
        "--threads",
        type=int,
        default=None,
        help="threads per embedded server process (default: the cores split between them)",
    )
    ev.add_argument(
        "--parallel",
        type=int,
        default=None,
        help="embedded server processes, each answering one request at a time "
        "(default: one per core, at most 4)",
    )
    ev.add_argument(
        "--timeout", type=float, default=300.0, help="per-request timeout in seconds (default: 300)"
    )
    ev.add_argument(
        "--slots",
        type=int,
        default=None,
        metavar="N",
        help="requests each -b endpoint serves at once (1 for a llama.cpp server without "
        "parallel slots): more wait here and count as waiting for a request slot, not as "
        "model time (default: unknown; the embedded model's servers: 1)",
    )


def _add_scale_and_output_options(ev: argparse.ArgumentParser) -> None:
    """Ray workers, the response cache, the plot and the progress bar."""
    ev.add_argument(
        "--ray-workers",
        type=int,
        default=None,
        metavar="N",
        help="spread groups over N Ray workers (needs the [ray] extra; endpoints are split between them)",
    )
    ev.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="Ray cluster to join, e.g. 'auto' after `ray start` (default: a local cluster)",
    )
    ev.add_argument("--no-plot", action="store_true", help="do not write the reward histogram")
    ev.add_argument(
        "--cache",
        nargs="?",
        const=True,
        default=None,
        metavar="PATH",
        help="answer model calls from the response cache when it has them (default file: "
        "~/.cache/verifiers_lite/responses.sqlite, or $VERIFIERS_LITE_CACHE)",
    )
    ev.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _add_init_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    init = sub.add_parser(
        "init",
        help="scaffold an installable environment package",
        description="Create NAME/ (or --path): pyproject, module with load_environment, "
        "a test and a README; then `pip install -e NAME` and `vf-lite eval NAME`.",
    )
    init.add_argument("name", metavar="NAME", help="environment id (letters, digits, - and _)")
    init.add_argument("--path", default=None, help="directory to create (default: ./NAME)")


def _add_view_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    vw = sub.add_parser(
        "view",
        help="browse runs, transcripts and rewards in a local web page",
        description="Serve a local web page over run directories (what results_path and vf-lite eval "
        "write); a folder holding many runs is scanned. Runs being written are followed live.",
    )
    vw.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="run directories, folders of runs or inspect_ai .eval logs "
        f"(default: {DEFAULT_SAVE_DIR} if present, else .)",
    )
    vw.add_argument(
        "--host",
        default="127.0.0.1",
        help="interface to bind (default: 127.0.0.1; any other host needs --token)",
    )
    vw.add_argument(
        "--port", type=int, default=8765, help="port (default: 8765; 0 picks a free one)"
    )
    vw.add_argument(
        "--token",
        action="store_true",
        help="require a random token, printed in the URL, on every request",
    )
    vw.add_argument("--no-browser", action="store_true", help="do not open a web browser")
