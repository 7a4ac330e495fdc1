"""The pytest path as users run it, beside the Python API, an aiohttp ceiling and other harnesses.

Every client is a fresh process that sends the same 2,400 prompts — the two tests of
``examples/test_ordering_left_right.py`` — to the local fake server (``tests/fake_server.py``, a
process of its own, so its CPU is not counted), which holds every request ``--latency`` seconds:
with C requests in flight the limit is C / latency (C = 32: 640 requests/s). The clients:

- ``pytest``: ``python -m pytest examples/test_ordering_left_right.py
  --competence-model='openai:m@URL?concurrency=C' --competence-report-only``, in the repository
  (its ``conftest.py`` included), with a fresh response cache each run;
- ``baseline``: the same command with the Python of ``--baseline-python`` (another commit checked
  out in its own worktree and virtual environment), in that checkout: old against new;
- ``api``: this project's Python API on the same two designs (``spec.design()``, ``evaluate``,
  ``profile``), the ``openai:`` model resolved with ``resolve_model``;
- ``api-designed``: the same, with both designs generated before the first request (kept in
  memory, as no user run keeps them): the request stream, parsing and reduction alone, with no
  design generated inside the window — what the wire costs, against the ceiling;
- ``aiohttp``: a minimal aiohttp client (one ``ClientSession``, C workers), the ceiling;
- ``lm-eval``: lm-evaluation-harness's ``local-chat-completions`` (``generate_until``), in the
  Python named by ``COMPETENCE_BENCH_LMEVAL_PYTHON``;
- ``inspect-ai``: when a Python with it is named by ``COMPETENCE_BENCH_INSPECT_PYTHON``.

Rounds interleave the clients (round 1: each client at each C, then round 2, …), so a machine
shared with other work loads them alike; an uncounted API run comes first, so that every counted
client meets a server that remembers its answers to these prompts. Per run: *in-window* = requests / (last answer sent −
first request received, from the server's log); *end to end* = requests / the process's wall
time, start-up included; CPU per request = the process's CPU (user + system, its threads and
children) / requests; server per request = the fake server's CPU over the run (Linux; 0 elsewhere) /
requests: the clients share the machine with it, so at a high rate the CPU a client leaves the
server bounds what it gets. Printed: medians over the rounds, and min / median / max of the per-round
ratios of the pytest path to the others. Nothing is asserted; every answer is checked.

    python bench/bench_http.py [--latency 0.05] [--concurrency 32 128] [--rounds 5]
                               [--clients pytest api api-designed aiohttp lm-eval]
                               [--baseline-python PY]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
ROOT = HERE.parents[1]
EXAMPLE = "examples/test_ordering_left_right.py"
ENVIRONMENTS = {
    "lm-eval": "COMPETENCE_BENCH_LMEVAL_PYTHON",
    "inspect-ai": "COMPETENCE_BENCH_INSPECT_PYTHON",
}


# -- the clients, each a fresh process ------------------------------------------------------------


def example_specs() -> list[Any]:
    """The two tests' designs, read from the example's markers."""
    import importlib.util

    from pytest_competence.engine.spec import spec_from_marker

    found = importlib.util.spec_from_file_location("left_right", ROOT / EXAMPLE)
    assert found is not None and found.loader is not None
    module = importlib.util.module_from_spec(found)
    found.loader.exec_module(module)
    specs = []
    for name in sorted(vars(module)):
        for mark in getattr(getattr(module, name), "pytestmark", []):
            if name.startswith("test_") and mark.name == "competence":
                specs.append(spec_from_marker(mark.args, mark.kwargs))
    return specs


def write_prompts(path: Path) -> list[str]:
    """Every prompt of the example, as the chats the clients send; the server's answers."""
    sys.path.insert(0, str(ROOT / "tests"))
    from fake_server import answer_for

    chats = [
        {"system": p.system, "text": p.text}
        for spec in example_specs()
        for item in spec.design()
        for p in item.prompts
    ]
    path.write_text(json.dumps(chats))
    return [answer_for(c["text"]) for c in chats]


def api_client(url: str, concurrency: int, _: Path, designed: bool = False) -> None:
    """The Python API on the example's designs; ``designed``: generated before the first
    request (the ``api-designed`` client) instead of beside the request stream."""
    from pytest_competence.engine.evaluate import evaluate
    from pytest_competence.engine.profile import profile
    from pytest_competence.models import resolve_model

    model = resolve_model(f"openai:m@{url}?concurrency={concurrency}")
    specs = example_specs()
    # spec.design() builds the whole list: called here, both designs are built before the
    # first request; called in the loop, each test's design is built just before its requests.
    designs = [spec.design() for spec in specs] if designed else None
    split = sys.modules.get("competence_cpu_split")  # bench_cpu_split.py's accounting, if loaded
    if split is not None:
        split.mark_start()
    for k, spec in enumerate(specs):
        profile(evaluate(spec.family, designs[k] if designs else spec.design(), model))
    if split is not None:
        split.mark_end()


def _messages(chat: dict[str, str]) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": chat["system"]},
        {"role": "user", "content": chat["text"]},
    ]


def aiohttp_client(url: str, concurrency: int, prompts: Path) -> list[str]:
    import asyncio

    import aiohttp

    chats = json.loads(prompts.read_text())
    answers: list[str] = [""] * len(chats)
    todo = iter(range(len(chats)))

    async def main() -> None:
        connector = aiohttp.TCPConnector(limit=concurrency)
        async with aiohttp.ClientSession(connector=connector) as session:

            async def worker() -> None:
                for i in todo:
                    body = {"model": "m", "temperature": 0.0, "messages": _messages(chats[i])}
                    async with session.post(url + "/chat/completions", json=body) as r:
                        answers[i] = (await r.json())["choices"][0]["message"]["content"]

            await asyncio.gather(*(worker() for _ in range(concurrency)))

    asyncio.run(main())
    return answers


def lmeval_client(url: str, concurrency: int, prompts: Path) -> list[str]:
    from lm_eval.api.instance import Instance
    from lm_eval.models.api_models import JsonChatStr
    from lm_eval.models.openai_completions import LocalChatCompletion

    chats = json.loads(prompts.read_text())
    lm = LocalChatCompletion(
        model="m",
        base_url=url + "/chat/completions",
        num_concurrent=concurrency,
        max_retries=3,
        tokenized_requests=False,
        max_gen_toks=16,
    )
    requests = [
        Instance(
            request_type="generate_until",
            doc={},
            idx=i,
            arguments=(JsonChatStr(json.dumps(_messages(chat))), {"until": ["\n\n"]}),
        )
        for i, chat in enumerate(chats)
    ]
    return list(lm.generate_until(requests, disable_tqdm=True))


def inspect_client(url: str, concurrency: int, prompts: Path) -> list[str]:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser

    chats = json.loads(prompts.read_text())
    samples = [
        Sample(input=[ChatMessageSystem(content=c["system"]), ChatMessageUser(content=c["text"])])
        for c in chats
    ]
    os.environ["OPENAI_API_KEY"] = os.environ.get("OPENAI_API_KEY", "none")
    logs = eval(
        Task(dataset=samples),
        model="openai/m",
        model_base_url=url,
        max_connections=concurrency,
        # Chat Completions, as the other clients: inspect-ai's openai provider otherwise sends
        # the Responses API (POST /responses), which an OpenAI-compatible server need not serve.
        model_args={"responses_api": False},
        log_dir=str(prompts.parent / "inspect-logs"),  # not ./logs in the repository
        log_level="error",
        display="none",
    )
    return [s.output.completion for s in logs[0].samples or []]


CLIENTS: dict[str, Any] = {
    "api": api_client,
    "api-designed": lambda url, concurrency, prompts: api_client(url, concurrency, prompts, True),
    "aiohttp": aiohttp_client,
    "lm-eval": lmeval_client,
    "inspect-ai": inspect_client,
}


# -- the parent -----------------------------------------------------------------------------------


def checkout_of(python: str) -> Path:
    """The repository whose pytest-competence ``python`` imports."""
    found = subprocess.run(
        [
            python,
            "-c",
            "import pathlib, pytest_competence as p; print(pathlib.Path(p.__file__).parents[2])",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return Path(found.stdout.strip())


def run_once(
    kind: str, python: str, server: Any, c: int, prompts: Path, tmp: Path
) -> dict[str, Any]:
    """One fresh client process at concurrency ``c``: wall, CPU, the server's window."""
    from _machine import cpu_seconds  # not at the top: the clients' processes run this file

    url = server.url
    if kind in ("pytest", "baseline"):
        spec = f"--competence-model=openai:m@{url}?concurrency={c}"
        cache = tmp / f"cache-{time.monotonic_ns()}.sqlite"
        command = [python, "-m", "pytest", EXAMPLE, spec, "--competence-report-only"]
        command += ["-p", "no:cacheprovider", "-o", f"competence_cache_path={cache}"]
        cwd = ROOT if kind == "pytest" else checkout_of(python)
    else:
        command = [
            python,
            str(HERE),
            "--client",
            kind,
            "--url",
            url,
            "-C",
            str(c),
            "--prompts",
            str(prompts),
        ]
        cwd = ROOT
    out = tmp / "answers.json"
    out.unlink(missing_ok=True)
    server.reset()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_before = cpu_seconds(server.proc.pid)
    start = time.perf_counter()
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, env={**os.environ, "BENCH_OUT": str(out)}
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    server_after = cpu_seconds(server.proc.pid)
    if done.returncode != 0 or (kind in ("pytest", "baseline") and "2 passed" not in done.stdout):
        raise SystemExit(
            f"{kind} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    log = [e for e in server.log() if "end" in e]
    if not log:  # a peer whose errors are logged, not raised, can exit 0 having sent nothing
        raise SystemExit(
            f"{kind} got no answer from the server (exit {done.returncode}):\n"
            f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
    first, last = min(e["t"] for e in log), max(e["end"] for e in log)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    answers = json.loads(out.read_text()) if out.exists() else None
    return {
        "n": len(log),
        "wall": wall,
        "window": last - first,
        "cpu": cpu,
        "server": server_after - server_before,
        "answers": answers,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--latency", type=float, default=0.05, help="Server latency, seconds")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[32, 128], help="Requests in flight"
    )
    parser.add_argument("--rounds", type=int, default=5, help="Interleaved rounds")
    parser.add_argument(
        "--clients",
        nargs="+",
        default=["pytest", "baseline", "api", "api-designed", "aiohttp", "lm-eval", "inspect-ai"],
        help="Which clients (those without their Python are skipped)",
    )
    parser.add_argument(
        "--baseline-python", help="A Python with another pytest-competence installed"
    )
    parser.add_argument("--client", help=argparse.SUPPRESS)  # a client process's role
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("-C", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--prompts", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.client:
        answers = CLIENTS[args.client](args.url, args.C, Path(args.prompts))
        Path(os.environ["BENCH_OUT"]).write_text(json.dumps(answers))
        return

    sys.path[:0] = [str(HERE.parent), str(ROOT / "tests")]
    from _machine import describe

    from fake_server import FakeServer

    print(describe())
    pythons: dict[str, str | None] = {
        "pytest": sys.executable,
        "baseline": args.baseline_python,
        "api": sys.executable,
        "api-designed": sys.executable,
        "aiohttp": sys.executable if _has(sys.executable, "aiohttp") else None,
        **{k: os.environ.get(v) for k, v in ENVIRONMENTS.items()},
    }
    kinds = [k for k in args.clients if pythons.get(k)]
    for k in args.clients:
        if k not in kinds:
            why = {"baseline": "--baseline-python not given", "aiohttp": "aiohttp not installed"}
            print(
                f"{k}: skipped: {why.get(k, f'set {ENVIRONMENTS.get(k)} to a Python that has it')}"
            )
    runs: dict[tuple[int, str], list[dict[str, Any]]] = {
        (c, k): [] for c in args.concurrency for k in kinds
    }
    loads = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as folder:
        tmp = Path(folder)
        prompts = tmp / "prompts.json"
        expected = write_prompts(prompts)
        server = FakeServer(latency=args.latency)
        try:
            # One uncounted run first, so that every counted one meets a server that has read
            # these prompts before (it remembers its answers): the first client is not charged
            # for the server's own work.
            run_once("api", sys.executable, server, max(args.concurrency), prompts, tmp)
            for _ in range(max(1, args.rounds)):
                for c in args.concurrency:
                    for kind in kinds:
                        got = run_once(kind, pythons[kind] or "", server, c, prompts, tmp)
                        if got["n"] != len(expected) or got["answers"] not in (None, expected):
                            raise SystemExit(f"{kind}: {got['n']} requests, answers differ")
                        runs[c, kind].append(got)
                loads.append(os.getloadavg()[0])
        finally:
            server.close()
    report(args, runs, kinds, len(expected), loads)


def _environ(out: Path) -> dict[str, str]:
    # Bytecode caching on, as on a user's machine: without it pytest rewrites the asserts of
    # every plugin module (this package's, Hypothesis's) again in every run, seconds of start-up.
    environ = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**environ, "BENCH_OUT": str(out)}


def _has(python: str, module: str) -> bool:
    return subprocess.run([python, "-c", f"import {module}"], capture_output=True).returncode == 0


def report(
    args: argparse.Namespace,
    runs: dict[tuple[int, str], list[dict[str, Any]]],
    kinds: list[str],
    n: int,
    loads: list[float],
) -> None:
    med = statistics.median
    print(
        f"{n:,} prompts per run ({EXAMPLE}), latency {args.latency * 1e3:g} ms, {args.rounds} "
        f"interleaved rounds, each client a fresh process; load average (1 min) "
        f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs over the run"
    )
    print(
        f"{'C':>4} {'client':13}{'in-window/limit':>16}{'end to end/limit':>18}{'CPU ms/req':>12}"
        f"{'server ms/req':>15}   per round, in-window/limit"
    )
    for c in args.concurrency:
        limit = c / args.latency
        for kind in kinds:
            rs = runs[c, kind]
            window = [r["n"] / r["window"] / limit for r in rs]
            e2e = [r["n"] / r["wall"] / limit for r in rs]
            cpu = [r["cpu"] / r["n"] * 1e3 for r in rs]
            server = [r["server"] / r["n"] * 1e3 for r in rs]
            rounds = " ".join(f"{w:.2f}" for w in window)
            print(
                f"{c:>4} {kind:13}{med(window):16.3f}{med(e2e):18.3f}{med(cpu):12.3f}{med(server):15.3f}"
                f"   {rounds}"
            )
        if "pytest" not in kinds:
            continue
        ours = runs[c, "pytest"]
        for other in kinds:
            if other == "pytest":
                continue
            theirs = runs[c, other]
            for what, ratio in (
                ("in-window rate", lambda a, b: (a["n"] / a["window"]) / (b["n"] / b["window"])),
                ("end-to-end rate", lambda a, b: b["wall"] / a["wall"]),
                ("CPU per request", lambda a, b: a["cpu"] / b["cpu"]),
            ):
                rs = sorted(ratio(a, b) for a, b in zip(ours, theirs))
                print(
                    f"{c:>4} pytest / {other}: {what} {rs[0]:.2f} / {med(rs):.2f} / {rs[-1]:.2f} (min / median / max over rounds)"
                )
    print(
        "targets (issue 30), medians at C = 32 and 128: pytest in-window >= 0.95 x aiohttp's and "
        ">= lm-eval's; >= 0.9 x limit in-window and >= 0.7 end to end at C = 32"
    )


if __name__ == "__main__":
    main()
