"""Bad command-line options and probe settings: one clean error each (see ``bad_inputs.py``).

The pytest rows for the command-line options (outputs, models, baselines, batch export, the
``openai:`` settings) and for ``@pytest.mark.competence_probe`` and ``--competence-probe``; the
marker's design, ini options and the release gate are in ``test_bad_inputs.py``.
"""

from __future__ import annotations

import pytest

from bad_inputs import INTERRUPTED, Row, check_row

ROWS = [
    # -- command-line options
    Row(
        "json-missing-dir",
        "--competence-json missing/out.json: the directory missing does not exist",
        args=("--competence-json", "missing/out.json"),
    ),
    Row(
        "html-unwritable-dir",
        "--competence-html /proc/r.html: cannot write in /proc",
        args=("--competence-html", "/proc/r.html"),
    ),
    Row(
        "records-without-json",
        "--competence-records r.jsonl: the records file belongs to a "
        "results document; add --competence-json PATH",
        args=("--competence-records=r.jsonl",),
    ),
    Row(
        "records-is-the-json",
        "--competence-records out.json: is the --competence-json file "
        "itself; give the records their own file, e.g. out.records.jsonl",
        args=("--competence-json=out.json", "--competence-records=out.json"),
    ),
    Row(
        "records-missing-dir",
        "--competence-records missing/r.jsonl.gz: the directory missing does not exist",
        args=("--competence-json=out.json", "--competence-records=missing/r.jsonl.gz"),
    ),
    Row(
        "records-gzip",
        "",
        0,
        args=("--competence-json=out.json", "--competence-records=r.jsonl.gz"),
    ),
    Row(
        "html-missing-dir",
        "--competence-html missing/out.html: the directory missing",
        args=("--competence-html", "missing/out.html"),
    ),
    Row(
        "markdown-is-dir",
        "--competence-markdown .: is a directory",
        args=("--competence-markdown", "."),
    ),
    Row(
        "unknown-model",
        "--competence-model: unknown model 'nosuch'",
        args=("--competence-model", "nosuch"),
    ),
    Row(
        "unknown-policy",
        "--competence-model: Unknown reference policy 'nosuch'",
        args=("--competence-model", "ref:nosuch"),
    ),
    Row(
        "py-attribute-typo",
        "--competence-model: Model spec 'py:json:dunps': module 'json' has no attribute 'dunps' "
        "(did you mean 'dumps'?); it defines dump, dumps",
        args=("--competence-model=py:json:dunps",),
    ),
    Row(
        "py-missing-file",
        "--competence-model: Model spec 'py:missing.py:answer': no such file 'missing.py' "
        "(looked in the rootdir '",
        args=("--competence-model=py:missing.py:answer",),
    ),
    # -- specs that name what was meant (issue #49)
    Row(
        "py-without-scheme",
        "--competence-model: Unknown model scheme 'mymodel.py' in 'mymodel.py:answer' (did you "
        "mean 'py:mymodel.py:answer'?); expected one of hf, openai, py, ref, vllm",
        args=("--competence-model=mymodel.py:answer",),
    ),
    Row(
        "py-module-without-scheme",
        "Unknown model scheme 'json' in 'json:dumps' (did you mean 'py:json:dumps'?)",
        args=("--competence-model=json:dumps",),
    ),
    Row(
        "scheme-typo",
        "Unknown model scheme 'opneai' in 'opneai:m@http://127.0.0.1:9/v1' (did you mean "
        "'openai:m@http://127.0.0.1:9/v1'?)",
        args=("--competence-model=opneai:m@http://127.0.0.1:9/v1",),
    ),
    Row(
        "url-as-spec",
        "Unknown model scheme 'http' in 'http://127.0.0.1:9/v1' (a server's URL goes after the "
        "model's name: 'openai:MODEL@http://127.0.0.1:9/v1'; MODEL is the name the server "
        "serves, listed by GET http://127.0.0.1:9/v1/models)",
        args=("--competence-model=http://127.0.0.1:9/v1",),
    ),
    Row(
        "policy-typo",
        "--competence-model: Unknown reference policy 'idael' in 'ref:idael' (did you mean "
        "'ref:ideal'?)",
        args=("--competence-model=ref:idael",),
    ),
    Row(
        "policy-parameter-typo",
        "'ref:coin?sed=1': policy 'coin' does not take parameters ['sed'] (did you mean "
        "'seed'?); it takes seed, p",
        args=("--competence-model=ref:coin?sed=1",),
    ),
    Row(
        "policy-without-scheme",
        "--competence-model: unknown model 'ideal' (did you mean 'ref:ideal'?)",
        args=("--competence-model=ideal",),
    ),
    Row(
        "alias-typo",
        "--competence-model: unknown model 'qwn' (did you mean the alias 'qwen'?)",
        ini=("competence_models = qwen = ref:ideal",),
        args=("--competence-model=qwn",),
    ),
    Row(
        "py-file-without-attribute",
        "unknown model 'mymodel.py' (a py: spec names the callable too: 'py:mymodel.py:ATTR')",
        args=("--competence-model=mymodel.py",),
    ),
    Row(
        "model-id-without-scheme",
        "unknown model 'Qwen/Qwen2.5-7B' (did you mean 'hf:Qwen/Qwen2.5-7B', run in this "
        "process, or 'openai:Qwen/Qwen2.5-7B@http://HOST:PORT/v1', served?)",
        args=("--competence-model=Qwen/Qwen2.5-7B",),
    ),
    Row(
        "openai-url-as-model",
        "'openai:http://127.0.0.1:9/v1' names a server but no model; write the model's name "
        "before the URL: 'openai:MODEL@http://127.0.0.1:9/v1', where MODEL is the name the "
        "server serves, listed by GET http://127.0.0.1:9/v1/models",
        args=("--competence-model=openai:http://127.0.0.1:9/v1",),
    ),
    Row(
        "openai-url-first",
        "'openai:http://127.0.0.1:9/v1@qwen': the model's name comes first, then its server's "
        "URL: 'openai:qwen@http://127.0.0.1:9/v1'",
        args=("--competence-model=openai:http://127.0.0.1:9/v1@qwen",),
    ),
    Row(
        "openai-url-without-http",
        "expected base URLs such as http://127.0.0.1:8000/v1, but got '127.0.0.1:9/v1' (did you "
        "mean 'http://127.0.0.1:9/v1'?)",
        args=("--competence-model=openai:m@127.0.0.1:9/v1",),
    ),
    Row(
        "openai-parameter-typo",
        "unknown parameter 'temprature' (did you mean 'temperature'?); expected one of",
        args=("--competence-model=openai:m@http://127.0.0.1:9/v1?temprature=0",),
    ),
    Row(
        "hf-missing-directory",
        "(did you mean 'hf:./checkpoints/step-1000'?); give the directory of a checkpoint "
        "saved with save_pretrained()",
        files=(("checkpoints/step-1000/config.json", "{}"),),
        args=("--competence-model=hf:./chekpoints/step-1000",),
    ),
    Row(
        "vllm-missing-directory",
        "'vllm:./nosuch': no directory './nosuch' in the working directory",
        args=("--competence-model=vllm:./nosuch",),
    ),
    Row(
        "hf-run-directory",
        "'hf:./checkpoints': 'checkpoints' has no config.json; expected the directory of a "
        "checkpoint saved with save_pretrained(); it holds the checkpoints step-500, step-1000, "
        "e.g. 'hf:./checkpoints/step-1000'",
        files=(
            ("checkpoints/step-500/config.json", "{}"),
            ("checkpoints/step-1000/config.json", "{}"),
        ),
        args=("--competence-model=hf:./checkpoints",),
    ),
    # -- a py: module named on the command line is imported at start-up (issue #49)
    Row(
        "py-wrong-signature",
        "--competence-model: Model spec 'py:mymodel.py:answer': answer(prompts, temperature) "
        "cannot be called with one list of prompts (missing a required argument: "
        "'temperature'); a py: model is called with the batch as its one argument",
        files=(("mymodel.py", "def answer(prompts, temperature):\n    return []\n"),),
        args=("--competence-model=py:mymodel.py:answer",),
    ),
    Row(
        "py-generate-wrong-signature",
        "--competence-model: Model spec 'py:mymodel.py:Model': Model.generate() cannot be "
        "called with one list of prompts (too many positional arguments)",
        files=(("mymodel.py", "class Model:\n    def generate(self):\n        return []\n"),),
        args=("--competence-model=py:mymodel.py:Model",),
    ),
    Row(
        "py-import-fails",
        "--competence-model: Model spec 'py:mymodel.py:answer': importing 'mymodel.py' raised "
        "ModuleNotFoundError: No module named 'numpyy' (at ",
        files=(("mymodel.py", "import numpyy\n\n\ndef answer(prompts):\n    return []\n"),),
        args=("--competence-model=py:mymodel.py:answer",),
    ),
    Row(
        "py-import-raises-via-alias",
        "--competence-model: alias 'mine' in competence_models: Model spec "
        "'py:mymodel.py:answer': importing 'mymodel.py' raised RuntimeError: no GPU (at ",
        files=(
            ("mymodel.py", "raise RuntimeError('no GPU')\n\n\ndef answer(p):\n    return []\n"),
        ),
        ini=("competence_models = mine = py:mymodel.py:answer",),
        args=("--competence-model=mine",),
    ),
    Row(
        "py-baseline-import-fails",
        "--competence-baseline: Model spec 'py:old.py:answer': importing 'old.py' raised "
        "ModuleNotFoundError: No module named 'numpyy' (at ",
        files=(("old.py", "import numpyy\n\n\ndef answer(prompts):\n    return []\n"),),
        args=("--competence-model=ref:ideal", "--competence-baseline=py:old.py:answer"),
    ),
    Row(
        "py-missing-module",
        "--competence-model: Model spec 'py:no_such_module:answer': cannot import module",
        args=("--competence-model=py:no_such_module:answer",),
    ),
    Row(
        "py-not-callable",
        "--competence-model: Model spec 'py:string:digits': 'digits' is a str, not a callable",
        args=("--competence-model=py:string:digits",),
    ),
    Row(
        "default-model-bad",
        "competence_default_model: Unknown reference policy 'nosuch'",
        ini=("competence_default_model = ref:nosuch",),
    ),
    Row(
        "alias-target-bad",
        "--competence-model: alias 'q' in competence_models: Unknown reference policy 'nosuch'",
        ini=("competence_models = q = ref:nosuch",),
        args=("--competence-model=q",),
    ),
    Row(
        "cache-choice",
        "argument --competence-cache: invalid choice: 'bad'",
        args=("--competence-cache=bad",),
    ),
    Row(
        "blank-model",
        "--competence-model: got ' ', which names no model",
        args=("--competence-model= ",),
    ),
    Row(
        "no-model-required",
        "competence_require_model is set, but no model was named",
        ini=("competence_require_model = true",),
    ),
    Row("no-model-skips", "", 0),
    Row(
        "openai-no-url",
        "'openai:gpt-4o-mini' names no server; write its base URL out in full",
        args=("--competence-model=openai:gpt-4o-mini",),
    ),
    Row(
        "openai-max-response-zero",
        "expected max_response_mib to be an integer >= 1, but got max_response_mib='0'",
        args=("--competence-model=openai:m@http://127.0.0.1:9/v1?max_response_mib=0",),
    ),
    Row(
        "max-response-mib-ini",
        "the ini option competence_max_response_mib = 16MB: expected an integer >= 1 (MiB)",
        ini=("competence_max_response_mib = 16MB",),
        args=("--competence-model=openai:m@http://127.0.0.1:9/v1",),
    ),
    Row(
        "lookahead-not-a-number",
        "competence_lookahead: expected a whole number of prompts (0 turns asking ahead off), "
        "but got '2k'",
        ini=("competence_lookahead = 2k",),
    ),
    Row(
        "lookahead-negative",
        "competence_lookahead: expected a whole number of prompts",
        ini=("competence_lookahead = -1",),
    ),
    Row("lookahead-off", "", 0, ini=("competence_lookahead = 0",)),
    Row(
        "baseline-missing",
        "--competence-baseline: no such file 'missing.json'",
        args=("--competence-model=ref:ideal", "--competence-baseline=missing.json"),
    ),
    Row(
        "baseline-not-a-model-or-file",
        "--competence-baseline: unknown model 'ckpt_a'; it is not an alias (aliases: none are "
        "configured), a spec such as 'ref:ideal' or 'py:my_models:answer' or an archived "
        "results document (no such file)",
        args=("--competence-model=ref:ideal", "--competence-baseline=ckpt_a"),
    ),
    Row(
        "baseline-records-file",
        "--competence-baseline: 'r.records.jsonl' is a records file (one JSON line per "
        "prompt), not a results document; pass the --competence-json file it belongs to, e.g. "
        "r.json",
        args=("--competence-model=ref:ideal", "--competence-baseline=r.records.jsonl"),
    ),
    Row(
        "baseline-bad-spec",
        "--competence-baseline: Unknown reference policy 'nosuch'",
        args=("--competence-model=ref:ideal", "--competence-baseline=ref:nosuch"),
    ),
    Row(
        "baseline-py-typo",
        "--competence-baseline: Model spec 'py:json:dumpz': module 'json' has no attribute",
        args=("--competence-model=ref:ideal", "--competence-baseline=py:json:dumpz"),
    ),
    Row(
        "baseline-blank",
        "--competence-baseline: got an empty value",
        args=("--competence-model=ref:ideal", "--competence-baseline= "),
    ),
    Row(
        "batch-export-missing-dir",
        "--competence-batch-export missing/r.jsonl: the directory missing does not exist",
        args=("--competence-model=ref:ideal", "--competence-batch-export=missing/r.jsonl"),
    ),
    Row(
        "batch-export-template-missing-dir",
        "--competence-batch-export missing/m.jsonl: the directory missing does not exist",
        args=(
            "--competence-model=openai:m@http://127.0.0.1:9/v1",
            "--competence-batch-export=missing/{model}.jsonl",
        ),
    ),
    Row(
        "batch-max-lines-zero",
        "argument --competence-batch-max-lines: expected a whole number >= 1, got '0'",
        args=("--competence-batch-export=r.jsonl", "--competence-batch-max-lines=0"),
    ),
    Row(
        "batch-max-mb-text",
        "argument --competence-batch-max-mb: expected a whole number >= 1, got '200MB'",
        args=("--competence-batch-export=r.jsonl", "--competence-batch-max-mb=200MB"),
    ),
    Row(
        "batch-max-lines-without-export",
        "--competence-batch-max-lines applies to batch exports; add "
        "--competence-batch-export=PATH (or drop --competence-batch-max-lines)",
        args=("--competence-batch-max-lines=10",),
    ),
    Row(
        "shard-zero",
        "argument --competence-shard: got '0/3': K counts the shards from 1 to N=3, e.g. "
        "--competence-shard=1/3",
        args=("--competence-shard=0/3",),
    ),
    Row(
        "shard-past-count",
        "argument --competence-shard: got '4/3': K counts the shards from 1 to N=3",
        args=("--competence-shard=4/3",),
    ),
    Row(
        "shard-not-k-of-n",
        "argument --competence-shard: expected K/N, shard K of N shards, e.g. "
        "--competence-shard=1/3; got 'x'",
        args=("--competence-shard=x",),
    ),
    Row(
        "shard-no-shards",
        "argument --competence-shard: got '1/0': N is the number of shards, at least 1",
        args=("--competence-shard=1/0",),
    ),
    Row("shard-one-of-one", "", 0, args=("--competence-shard=1/1",)),
    Row(
        "batch-runner-choice",
        "argument --competence-batch-runner: invalid choice: 'sglang'",
        args=("--competence-batch-export=r.jsonl", "--competence-batch-runner=sglang"),
    ),
    Row(
        "batch-runner-without-export",
        "--competence-batch-runner applies to batch exports",
        args=("--competence-batch-runner=vllm",),
    ),
    Row(
        "batch-runner-vllm-completions",
        "--competence-batch-runner=vllm: model 'openai:m@http://127.0.0.1:9/v1?mode=completions' "
        "writes /v1/completions lines (mode=completions), and vllm run-batch takes "
        "/v1/chat/completions lines only; use mode=chat",
        args=(
            "--competence-model=openai:m@http://127.0.0.1:9/v1?mode=completions",
            "--competence-batch-export=r.jsonl",
            "--competence-batch-runner=vllm",
        ),
    ),
    Row(
        "openai-max-completion-tokens-zero",
        "expected max_completion_tokens to be an integer >= 1, but got max_completion_tokens='0'",
        args=("--competence-model=openai:m@http://127.0.0.1:9/v1?max_completion_tokens=0",),
    ),
    Row(
        "openai-max-completion-tokens-and-max-tokens",
        "max_tokens and max_completion_tokens name the same limit; keep one",
        args=(
            "--competence-model=openai:m@http://127.0.0.1:9/v1?max_tokens=4&max_completion_tokens=4",
        ),
    ),
    Row(
        "openai-max-completion-tokens-completions",
        "max_completion_tokens is a chat-mode field; /completions takes max_tokens",
        args=(
            "--competence-model=openai:m@http://127.0.0.1:9/v1?mode=completions"
            "&max_completion_tokens=4",
        ),
    ),
    # -- the probes (issue #27): the marker's settings at collection, the option itself
    Row(
        "probe-positional",
        "@pytest.mark.competence_probe: takes keywords only",
        INTERRUPTED,
        probe="[0, 2]",
    ),
    Row(
        "probe-unknown",
        "@pytest.mark.competence_probe: unknown argument(s) permutation; it takes layers",
        INTERRUPTED,
        probe="permutation=3",
    ),
    Row(
        "probe-permutations",
        "permutations must be an integer ≥ 0, got permutations=-1; e.g. permutations=100",
        INTERRUPTED,
        probe="permutations=-1",
    ),
    Row("probe-folds", "folds must be an integer ≥ 2, got folds=1", INTERRUPTED, probe="folds=1"),
    Row(
        "probe-threshold",
        "threshold must be an AUROC in [0.5, 1], got threshold=0.3",
        INTERRUPTED,
        probe="threshold=0.3",
    ),
    Row(
        "probe-confidence",
        "confidence must be in (0, 1), got confidence=1.5",
        INTERRUPTED,
        probe="confidence=1.5",
    ),
    Row(
        "probe-l2",
        "l2 must be a positive number (the ridge penalty λ; scikit-learn's C = 1/λ), got l2=-1.0",
        INTERRUPTED,
        probe="l2=-1.0",
    ),
    Row(
        "probe-precision",
        "precision must be one of float32, float16, got precision='bfloat16'",
        INTERRUPTED,
        probe="precision='bfloat16'",
    ),
    Row(
        "probe-layers",
        "layers must be distinct residual indices ≥ 0 (0: the embeddings, L: the last "
        "block's output), or None for all, got layers=[1, 1]",
        INTERRUPTED,
        probe="layers=[1, 1]",
    ),
    Row(
        "probe-patch-layers",
        "patch_layers must be distinct residual indices ≥ 0",
        INTERRUPTED,
        probe="patch_layers=[-1]",
    ),
    Row(
        "probe-patch",
        "patch must name the presentation the original is patched into, or be None, got patch=3",
        INTERRUPTED,
        probe="patch=3",
    ),
    Row(
        "probe-max-mib",
        "max_mib must be a positive number of MiB, got max_mib=0",
        INTERRUPTED,
        probe="max_mib=0",
    ),
    Row("probe-defaults-ref", "", 0, probe="", args=("--competence-model=ref:ideal",)),
    Row("probe-option-ref", "", 0, args=("--competence-model=ref:ideal", "--competence-probe")),
    Row(
        "probe-option-takes-no-value",
        "argument --competence-probe: ignored explicit argument 'yes'",
        args=("--competence-model=ref:ideal", "--competence-probe=yes"),
    ),
]


@pytest.mark.parametrize("row", ROWS, ids=[r.id for r in ROWS])
def test_option_input(pytester: pytest.Pytester, row: Row):
    check_row(pytester, row)
