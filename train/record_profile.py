"""Run the learned model's profile suite and keep its figures in the checkpoint's training.json.

    python train/record_profile.py src/pytest_competence/models/shipped/learned-ordering

Runs ``train/learned_ordering_suite.py`` through pytest (the plugin itself: ``hf:`` on the CPU,
greedy decoding, no response cache, ``--competence-diagnose``) and stores, per test, the accuracy
per level and presentation, the answers' validity, and the diagnosis: what
``tests/test_learned.py`` checks the shipped checkpoint against.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

SUITE = Path(__file__).resolve().parent / "learned_ordering_suite.py"
DECODING = "max_new_tokens=2&batch_size=32&device=cpu"


def run_suite(checkpoint: str, out: Path) -> dict:
    """The results document of the suite against ``hf:checkpoint`` (raises if pytest fails)."""
    command = [
        sys.executable,
        "-m",
        "pytest",
        str(SUITE),
        "-q",
        "-p",
        "no:cacheprovider",
        "--competence-report-only",
        "--competence-diagnose",
        "--competence-cache=off",
        f"--competence-model=hf:{checkpoint}?{DECODING}",
        f"--competence-json={out}",
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stdout + done.stderr)
    print(done.stdout)
    return json.loads(out.read_text())


def figures(document: dict) -> dict:
    """Per test: accuracy per level × presentation, coverage, and the diagnosis in brief."""
    out = {}
    for r in document["results"]:
        d = r["diagnosis"]
        out[r["test"].split("::")[-1].removesuffix("[*]")] = {
            "family": r["family"],
            "accuracy": {str(lv["n"]): lv["accuracy_by_presentation"] for lv in r["levels"]},
            "coverage": {str(lv["n"]): lv["coverage"] for lv in r["levels"]},
            "diagnosis": {
                "verdict": d["verdict"],
                "indistinguishable": d["indistinguishable"],
                "closest": [[c["policies"], c["rate"]] for c in d["closest"][:4]],
            },
        }
    return out


def main(argv: list[str] | None = None) -> None:
    folder = Path((argv or sys.argv[1:])[0])
    with tempfile.TemporaryDirectory() as tmp:
        document = run_suite(str(folder), Path(tmp) / "results.json")
    record = json.loads((folder / "training.json").read_text())
    record["profile"] = {
        "suite": "train/learned_ordering_suite.py",
        "decoding": DECODING,
        "tests": figures(document),
    }
    (folder / "training.json").write_text(json.dumps(record, indent=2) + "\n")


if __name__ == "__main__":
    main()
