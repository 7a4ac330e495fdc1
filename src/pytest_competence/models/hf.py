"""``hf:PATH_OR_ID[?key=value&…]`` — a transformers causal LM loaded in this process.

``PATH_OR_ID`` is a saved checkpoint's directory, a checkpoint shipped with the package
(``pytest-competence/learned-ordering``), or a Hugging Face hub id already in the local cache
(``HF_HUB_CACHE``, else ``HF_HOME/hub``, else ``~/.cache/huggingface/hub``): nothing is ever
downloaded, and a model in neither place is a usage error saying so. It loads once, on first
use: on CUDA when available (bf16; under ``pytest -n N`` worker ``gwK`` takes GPU
``K mod count``), else on the CPU (float32). The tokenizer's chat template renders the prompt
when it has one; otherwise the prompt is the system prompt, a blank line and the text.

Generation is batched longest prompts first (similar lengths together; an out-of-memory error
shows at once); a failing batch is split until the failing prompt stands alone, and that one is
recorded as an error. The parameters are :data:`PARAMS`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from pytest_competence.policy import ModelSpecError
from pytest_competence.protocol import Prompt

from ._params import Param, choice, number, parse_params, text, whole
from .readout import Answer, Scores, in_order, scored_stream

__all__ = [
    "EXTRA",
    "PARAMS",
    "SHIPPED",
    "SHIPPED_DIR",
    "HFModel",
    "hf_model",
    "hub_cache",
    "hub_id",
    "locate",
    "require",
]

EXTRA = "pip install 'pytest-competence[hf]'"

PARAMS = (
    Param("max_new_tokens", whole(1), "longest answer in tokens", 16),
    Param("temperature", number(0, 100), "sampling temperature (0: greedy)", 0.0),
    Param("top_p", number(0, 1, above=True), "nucleus sampling mass"),
    Param("seed", whole(0), "seed of sampled decoding", 0),
    Param("batch_size", whole(1), "prompts per forward pass", 16),
    Param("dtype", choice("auto", "float32", "bfloat16", "float16"), "weights' dtype", "auto"),
    Param("device", text, "auto, cpu, cuda or cuda:N", "auto"),
    Param("readout", choice("generate", "score"), "answer by generating or by scoring", "generate"),
    Param("chat_template", choice("auto", "off"), "use the tokenizer's chat template", "auto"),
)


def require(backend: str, *modules: str) -> None:
    """Raise the extra's ``ImportError`` when a module the backend needs is not installed."""
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ImportError(
            f"the {backend} backend needs {' and '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed: {EXTRA}"
        )


def hub_cache() -> Path:
    """The local Hugging Face hub cache, as the hub library itself would find it."""
    if os.environ.get("HF_HUB_CACHE"):
        return Path(os.environ["HF_HUB_CACHE"]).expanduser()
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join("~", ".cache"), "huggingface"
    )
    return Path(home).expanduser() / "hub"


#: Checkpoints trained in this project and shipped with the package, by the name ``hf:`` takes
#: (a local directory of the same name wins). ``training.json`` in each records how it was made.
SHIPPED = {"pytest-competence/learned-ordering": "learned-ordering"}
SHIPPED_DIR = Path(__file__).parent / "shipped"


def hub_id(name: str) -> bool:
    """Whether ``name`` may be a model id on the hub (``Org/Name``), not a path."""
    return not name.startswith((".", "/", "~")) and name.count("/") <= 1 and "\\" not in name


def locate(name: str, spec: str) -> Path:
    """The checkpoint directory of ``name``: a local directory, a checkpoint shipped with the
    package (:data:`SHIPPED`), or a snapshot in the hub cache."""
    path = Path(name).expanduser()
    if not path.is_dir() and name in SHIPPED:
        path = SHIPPED_DIR / SHIPPED[name]
    scheme = spec.partition(":")[0]
    if path.is_dir():
        if not (path / "config.json").is_file():
            inner = _checkpoints_in(path)
            raise ModelSpecError(
                f"{spec!r}: {str(path)!r} has no config.json; expected the "
                f"directory of a checkpoint saved with save_pretrained()"
                + (
                    f"; it holds the checkpoints {', '.join(inner)}, e.g. "
                    f"'{scheme}:{name.rstrip('/')}/{inner[-1]}'"
                    if inner
                    else ""
                )
            )
        return path.resolve()
    if not hub_id(name):
        from ._suggest import did_you_mean

        close = _nearest_path(name)
        raise ModelSpecError(
            f"{spec!r}: no directory {name!r}"
            + ("" if path.is_absolute() else f" in the working directory {os.getcwd()}")
            + did_you_mean(close and f"{scheme}:{close}")
            + "; give the directory of a checkpoint saved with save_pretrained()"
        )
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(name, "config.json", cache_dir=hub_cache())
    if isinstance(found, str):
        return Path(found).parent
    from ._suggest import did_you_mean, near

    cached = [
        d.name[len("models--") :].replace("--", "/")
        for d in _subdirectories(hub_cache())
        if d.name.startswith("models--")
    ]
    close = near(name, [c for c in cached if c != name])
    raise ModelSpecError(
        f"{spec!r}: {name!r} is neither a local checkpoint directory nor a model in the local "
        f"Hugging Face cache ({hub_cache()}){did_you_mean(close and f'{scheme}:{close}')}. "
        f"pytest-competence never downloads models: fetch it first (e.g. "
        f"'huggingface-cli download {name}') or give the checkpoint's directory"
    )


def _nearest_path(name: str) -> str | None:
    """``name`` with its first missing part replaced by the closest folder there, if one is
    close (``./chekpoints/step-1000`` → ``./checkpoints/step-1000``)."""
    from ._suggest import near

    pieces = name.rstrip("/").split("/")
    for i in range(len(pieces)):
        head = "/".join(pieces[: i + 1])
        if head and not Path(head).expanduser().exists():
            base = "/".join(pieces[:i]) or ("/" if name.startswith("/") else ".")
            close = near(pieces[i], [d.name for d in _subdirectories(Path(base).expanduser())])
            return None if close is None else "/".join([*pieces[:i], close, *pieces[i + 1 :]])
    return None


def _subdirectories(folder: Path) -> list[Path]:
    try:
        return sorted(d for d in folder.iterdir() if d.is_dir())
    except OSError:
        return []


def _checkpoints_in(folder: Path) -> list[str]:
    """The checkpoints one level inside ``folder`` (a training run's output directory), in
    the order of their step numbers."""
    found = [d.name for d in _subdirectories(folder) if (d / "config.json").is_file()]
    return sorted(
        found, key=lambda n: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", n)]
    )


def _fingerprint(folder: Path) -> list[tuple[str, int, int]]:
    """Names, sizes and modification times of the checkpoint's files: a retrained model in the
    same directory must not be answered from the cache of the old one."""
    return sorted(
        (p.name, p.stat().st_size, p.stat().st_mtime_ns) for p in folder.iterdir() if p.is_file()
    )


def hf_model(rest: str, spec: str) -> HFModel:
    """Build the model of ``hf:PATH_OR_ID[?key=value&…]`` (weights load on first use)."""
    name, _, query = rest.partition("?")
    if not name.strip():
        raise ModelSpecError(
            f"Malformed model spec {spec!r}; expected 'hf:PATH_OR_ID', e.g. "
            f"'hf:./checkpoints/step-1000' or 'hf:Qwen/Qwen2.5-0.5B-Instruct'"
        )
    params = parse_params(query, PARAMS, spec)
    # A directory that is not there is said whatever is installed; a hub id needs the hub.
    path = None if hub_id(name.strip()) else locate(name.strip(), spec)
    require("transformers", "torch", "transformers")
    return HFModel(spec, path or locate(name.strip(), spec), **params)


class HFModel:
    """A transformers causal LM; see the module docstring for what it does and takes."""

    #: Its forward passes run in torch's kernels, outside the interpreter lock: the design's next
    #: chunk is generated meanwhile (:func:`~pytest_competence.models.overlaps_generation`).
    releases_gil = True

    def __init__(
        self,
        name: str,
        path: Path,
        *,
        max_new_tokens: int = 16,
        temperature: float = 0.0,
        top_p: float | None = None,
        seed: int = 0,
        batch_size: int = 16,
        dtype: str = "auto",
        device: str = "auto",
        readout: str = "generate",
        chat_template: str = "auto",
    ) -> None:
        self.name = name
        self.path = Path(path)
        self.decoding = {
            "max_new_tokens": max_new_tokens,
            "temperature": temperature,
            "top_p": top_p,
            "seed": seed,
        }
        self.batch_size, self.readout, self.use_template = batch_size, readout, chat_template
        self.requested = {"dtype": dtype, "device": device}
        self._runner: Any = None

    def __repr__(self) -> str:
        return f"HFModel({self.name!r})"

    @property
    def runner(self) -> Any:
        """The loaded tokenizer and weights (:class:`._hf_batches.Runner`), loaded on first use."""
        if self._runner is None:
            from ._hf_batches import Runner

            self._runner = Runner(
                self.path,
                batch_size=self.batch_size,
                use_template=self.use_template == "auto",
                **self.requested,
            )
        return self._runner

    @property
    def cache_identity(self) -> str:
        """The checkpoint (files included), the dtype it runs in, and the decoding settings."""
        return json.dumps(
            {
                "backend": "hf",
                "path": str(self.path),
                "files": _fingerprint(self.path),
                "dtype": self.runner.dtype_name,
                "decoding": self.decoding,
                "readout": self.readout,
                "chat_template": self.use_template,
            },
            sort_keys=True,
        )

    @property
    def competence_identity(self) -> str:
        """The checkpoint's files and the decoding settings, without loading the weights (see
        :func:`~pytest_competence.models.identity.model_identity`)."""
        return json.dumps(
            {
                "backend": "hf",
                "path": str(self.path),
                "files": _fingerprint(self.path),
                "dtype": self.requested["dtype"],
                "decoding": self.decoding,
                "readout": self.readout,
                "chat_template": self.use_template,
            },
            sort_keys=True,
        )

    def stream(self, prompts: Sequence[Prompt]) -> Iterator[tuple[int, Answer]]:
        """``(index, answer or exception)`` batch by batch, as each batch finishes."""
        if self.readout == "score":
            yield from scored_stream(self, prompts)
            return
        yield from self.runner.generate(prompts, **self.decoding)

    def generate(self, prompts: Sequence[Prompt]) -> list[Answer]:
        return in_order(self.stream(prompts), len(prompts), self.name)

    def score(
        self, prompts: Sequence[Prompt], candidates: Sequence[str]
    ) -> list[Scores | BaseException]:
        """Per prompt, the summed log-probability of each candidate's tokens after the prompt."""
        return self.runner.score(prompts, candidates)

    def margins(
        self, prompts: Sequence[Prompt], positive: str = "yes", negative: str = "no"
    ) -> list[float | BaseException]:
        """Per prompt, ``log p(positive) − log p(negative)``: the yes/no logit margin."""
        from .readout import margins

        return margins(self, prompts, positive, negative)
