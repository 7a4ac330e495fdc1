"""A known answer written into a model's residual stream, for the probe tests and the GPU check.

:class:`Plant` registers forward pre-hooks on an ``hf:`` model: from block ``layer`` on, the
residual at the answer position (the last token) carries ``a·u + b·v``, where ``u`` is the
direction the final norm and the unembedding read as yes − no, ``v`` a direction orthogonal to
it (decodable, never read out), and ``(a, b)`` come from a function of the prompt that the test
gives — computed from the prompt's own text by the independent solver (``tests/solver.py``),
never from the generator's gold. The hooks find each row's prompt by its token ids, so they act
the same in any batch, padded or not, patched or not.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch

from solver import solve

__all__ = ["Plant", "solver_sign", "yes_default"]


def solver_sign(prompt) -> float:
    """+1 where the independent solver answers the prompt's text "yes", −1 for "no"."""
    return 1.0 if solve(prompt.text) == "yes" else -1.0


def yes_default(scale: float) -> Callable[[object], tuple[float, float]]:
    """The plant App. I describes: originals read out their answer (``a = ±scale``);
    equivalents say "yes" whatever the instance (``a = +scale``) while the answer stays
    decodable along ``v`` (``b = ±scale``)."""

    def plant(prompt) -> tuple[float, float]:
        sign = solver_sign(prompt)
        if prompt.presentation == "original":
            return scale * sign, 0.0
        return scale, scale * sign

    return plant


class Plant:
    """Hooks writing ``a·u + b·v`` into the residual at the answer position from ``layer`` on.

    Use as a context manager around the probe calls; ``coefficients(prompt) → (a, b)``.
    """

    def __init__(
        self,
        model,
        prompts: Sequence,
        layer: int,
        coefficients: Callable[[object], tuple[float, float]],
    ) -> None:
        runner = model.runner
        self.net = runner.model
        self.layer = layer
        self.table = {tuple(runner.encode(runner.render(p))): coefficients(p) for p in prompts}
        weight = self.net.get_output_embeddings().weight.detach().float()
        yes, no = runner.answer_tokens(prompts[0], ("yes", "no"))
        gamma = self.net.model.norm.weight.detach().float()
        u = (weight[yes[0]] - weight[no[0]]) * gamma
        self.u = u / u.norm()
        g = torch.Generator().manual_seed(7)
        v = torch.randn(u.shape, generator=g)
        v = v - (v @ self.u) * self.u
        self.v = v / v.norm()
        self._rows: list[tuple[float, float]] = []
        self._handles: list = []

    def __enter__(self) -> Plant:
        self._handles = [
            self.net.register_forward_pre_hook(self._read_prompts, with_kwargs=True),
            self.net.model.layers[self.layer].register_forward_pre_hook(
                self._write, with_kwargs=True
            ),
        ]
        return self

    def __exit__(self, *exc) -> None:
        for handle in self._handles:
            handle.remove()

    def _read_prompts(self, module, args, kwargs):
        ids, mask = kwargs["input_ids"], kwargs["attention_mask"]
        self._rows = [self.table[tuple(row[m.bool()].tolist())] for row, m in zip(ids, mask)]
        return args, kwargs

    def _write(self, module, args, kwargs):
        hidden = (args[0] if args else kwargs["hidden_states"]).clone()
        a = torch.tensor([r[0] for r in self._rows], dtype=torch.float32)
        b = torch.tensor([r[1] for r in self._rows], dtype=torch.float32)
        shift = a[:, None] * self.u + b[:, None] * self.v
        hidden[:, -1, :] += shift.to(hidden.device, hidden.dtype)
        if args:
            return (hidden, *args[1:]), kwargs
        return args, {**kwargs, "hidden_states": hidden}
