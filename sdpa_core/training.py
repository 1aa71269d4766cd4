"""A tiny training run through attention's softmax, with and without the 1/√d_k scale.

The task is retrieval. A seed fixes a vocabulary of V = 2n symbols with random embeddings of
norm √d_model. Each example holds ``n`` distinct symbols, its tokens; its query is the
embedding of one of them, the target, and the model must return the target's value, from a
table of random values that the examples of a batch share and that is drawn afresh for every
batch (so values are retrieved, never memorised). The model is one attention head:
``q = x_query W_q``, ``k_j = x_j W_k``, output ``softmax(q·k_j · scale / temperature) @ v``
over the example's tokens, and the loss is the squared error between that output and the
target's value. Only ``W_q`` and ``W_k`` learn, so every gradient passes through the softmax
Jacobian (:func:`sdpa_core.backward.attention_backward`), as it does in a transformer.

With the standard initialisation (q and k components of unit variance) the raw scores q·k
have variance d_k: scaled by 1/√d_k the softmax starts soft at every d_k; unscaled, at large
d_k it starts nearly one-hot on a random key, where its Jacobian, and with it the gradient
of most examples, is near 0.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from sdpa_core.attention import attention
from sdpa_core.backward import attention_backward
from sdpa_core.metrics import row_entropy, softmax_jacobian_norm
from sdpa_core.validation import positive_finite, positive_int

BATCH = 16
"""Examples per step, drawn afresh every step (online learning: there is no overfitting)."""
VALUE_DIM = 8
"""Dimension of the value vectors the head retrieves."""
DEFAULT_D_MODEL = 16
"""Default embedding dimension of the tokens."""
OPTIMIZERS = ("adam", "sgd")
"""The optimisers a run can use: Adam (β = 0.9, 0.999; ε = 1e-8) or plain SGD."""
ADAM_BETAS = (0.9, 0.999)
ADAM_EPSILON = 1e-8
METRICS = ("loss", "accuracy", "grad_norm", "entropy", "jacobian_norm")
"""What every step measures, in the order of :class:`TrainingStep`'s fields."""
FINAL_FRACTION = 0.1
"""The final loss of a run is its mean loss over this last fraction of its steps."""
SMOOTHING_STEPS = 10
"""Steps over which the seeds' mean loss is averaged before it is compared with a target."""
GRID_D_VALUES = (4, 16, 64, 256, 1024)
GRID_SEEDS = (0, 1, 2)
GRID_STEPS = 200
GRID_LRS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1)
TARGET_LOSS = 0.1
"""Default loss the grid counts steps to: about a tenth of a uniform head's loss (≈ 0.94)."""
SPEED_FACTOR = 1.1
"""How many times more steps (or final loss) count as slower rather than about as fast:
within 10 % either way the runs are "about as fast", beyond it the sentence gives the
factor (151 steps against 112 is "1.3× slower", not "about as fast")."""
# Independent random streams of one seed: what a run sees does not depend on d_k or lr.
_EMBEDDING_STREAM, _WEIGHT_STREAM, _DATA_STREAM = 0, 1, 2


@dataclass(frozen=True)
class TrainingStep:
    """What one optimisation step measured on the batch it trained on, before its update.

    The fields are those of :class:`TrainingRun`, for a single step.
    """

    step: int
    loss: float
    accuracy: float
    grad_norm: float
    entropy: float
    jacobian_norm: float


@dataclass(frozen=True)
class TrainingSettings:
    """Everything that determines a training run; checked when made.

    ``scaled`` chooses the 1/√d_k scale (True) or none (False); ``lr`` is the learning rate
    of ``optimizer`` ("adam" or "sgd"); ``temperature`` divides the logits as in attention;
    ``n`` is the number of tokens per example (the vocabulary holds 2n symbols) and
    ``d_model`` their embedding dimension. A seed fixes the embeddings, the initial weights
    and the batches whatever d_k and lr, so runs that differ only in ``scaled`` or ``lr`` see
    the same data from the same start.

    Raises:
        ValueError: for a d_k, steps, n (≥ 2) or d_model that is not a positive integer, a
            non-boolean ``scaled``, a seed < 0, an lr or temperature that is not positive and
            finite, or an unknown optimizer.
    """

    d_k: int
    scaled: bool
    steps: int
    lr: float
    n: int = 16
    d_model: int = DEFAULT_D_MODEL
    seed: int = 0
    optimizer: str = "adam"
    temperature: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.scaled, bool):
            raise ValueError(f"scaled must be True or False: got {self.scaled!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}: got {self.optimizer!r}")
        checked = {
            "d_k": positive_int("d_k", self.d_k),
            "steps": positive_int("steps", self.steps),
            "lr": positive_finite("lr", self.lr),
            "n": positive_int("n", self.n, minimum=2),
            "d_model": positive_int("d_model", self.d_model),
            "seed": positive_int("seed", self.seed, minimum=0),
            "temperature": positive_finite("temperature", self.temperature),
        }
        for name, value in checked.items():
            object.__setattr__(self, name, value)


@dataclass(frozen=True, eq=False)
class TrainingRun:
    """Per-step curves of one training run and the settings that produced it.

    ``loss`` is the mean squared error per value component (≈ 0.94 for uniform weights, ≈ 1.9
    for one-hot weights on a wrong token, 0 when solved); ``accuracy`` the fraction of
    examples whose target got the largest weight; ``grad_norm`` the Frobenius norm of the
    gradient of (W_q, W_k); ``entropy`` the mean row entropy of the weights in nats (log n
    uniform, 0 one-hot); ``jacobian_norm`` the median over the batch's rows of the softmax
    Jacobian's Frobenius norm, what the softmax lets through to a typical example's gradient.
    Each array has one entry per step and is read-only.
    """

    settings: TrainingSettings
    loss: np.ndarray
    accuracy: np.ndarray
    grad_norm: np.ndarray
    entropy: np.ndarray
    jacobian_norm: np.ndarray

    @property
    def final_loss(self) -> float:
        """Mean loss over the run's last tenth of steps (at least one step)."""
        return float(self.loss[-_final_window(self.loss.shape[0]) :].mean())


def _final_window(steps: int) -> int:
    return max(1, math.ceil(steps * FINAL_FRACTION))


def _finished_run(settings: TrainingSettings, curves: dict[str, np.ndarray]) -> TrainingRun:
    """A TrainingRun from one curve per metric, each made read-only."""
    for curve in curves.values():
        curve.setflags(write=False)
    return TrainingRun(settings=settings, **curves)


class _Batches:
    """The examples of one seed, step after step: which symbols, which target, which values."""

    def __init__(self, seed: int, n: int, d_model: int) -> None:
        self.n = n
        self.vocabulary = 2 * n
        embeddings = np.random.default_rng([seed, _EMBEDDING_STREAM]).standard_normal(
            (self.vocabulary, d_model)
        )
        # Every embedding has norm √d_model: unit variance per component, and a token is
        # more similar to itself than to any other, so W_q = W_k ∝ identity (d_k ≥ d_model)
        # would retrieve every target; a smaller d_k must find a low-rank way.
        embeddings *= math.sqrt(d_model) / np.linalg.norm(embeddings, axis=1, keepdims=True)
        self.embeddings = embeddings
        self.rng = np.random.default_rng([seed, _DATA_STREAM])

    def next(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The next batch: present symbols (B, V) as a mask, targets (B,), values (V, d_v).

        Each example holds ``n`` distinct symbols of the vocabulary of V and asks for one of
        them; the values are drawn afresh for every batch, so they must be retrieved, not
        learned. Values of symbols an example does not hold get weight exactly 0.
        """
        order = np.argsort(self.rng.random((BATCH, self.vocabulary)), axis=1)
        present = np.zeros((BATCH, self.vocabulary), dtype=bool)
        np.put_along_axis(present, order[:, : self.n], True, axis=1)
        targets = order[np.arange(BATCH), self.rng.integers(self.n, size=BATCH)]
        values = self.rng.standard_normal((self.vocabulary, VALUE_DIM))
        return present, targets, values


def _iter_runs(
    settings: TrainingSettings, seeds: Sequence[int], lrs: Sequence[float]
) -> Iterator[dict[str, np.ndarray]]:
    """Train one run per (seed, lr) at once, yielding each step's metrics as (seeds, lrs).

    Every setting but ``settings.seed`` and ``settings.lr`` applies to all the runs.

    A step is one attention whose query rows are the batch's B queries and whose keys are the
    whole vocabulary's, ``E W_k``; a mask lets each query see only its example's n tokens.
    Weights and gradients are those of attending over each example's n keys alone, without a
    copy of the keys per example.
    """
    d_k, d_model = settings.d_k, settings.d_model
    n_lrs = len(lrs)
    batches = [_Batches(seed, settings.n, d_model) for seed in seeds]
    embeddings = np.stack([batch.embeddings for batch in batches])[:, np.newaxis]
    # One initialisation per seed, shared by every lr and by scaled and unscaled runs:
    # W ~ N(0, 1/d_model) and ‖x‖² = d_model make each q and k component N(0, 1).
    init = np.stack(
        [
            np.random.default_rng([seed, _WEIGHT_STREAM]).standard_normal((2, d_model, d_k))
            for seed in seeds
        ]
    ) / math.sqrt(d_model)
    params = np.repeat(init[:, np.newaxis], n_lrs, axis=1)  # (seeds, lrs, 2, d_model, d_k)
    rates = np.asarray(lrs, dtype=float).reshape(1, n_lrs, 1, 1, 1)
    first_moment = np.zeros_like(params)
    second_moment = np.zeros_like(params)
    grads = np.empty_like(params)
    scratch = np.empty_like(params)
    scale = None if settings.scaled else 1.0
    for step in range(settings.steps):
        present, targets, values = (
            np.stack(parts) for parts in zip(*(batch.next() for batch in batches), strict=True)
        )
        # The batch's B queries are the rows of one attention over the V keys:
        # q (seeds, lrs, B, d_k), k (seeds, lrs, V, d_k), values (seeds, 1, V, d_v).
        queries = np.take_along_axis(embeddings[:, 0], targets[:, :, np.newaxis], axis=1)
        q = queries[:, np.newaxis] @ params[:, :, 0]
        k = embeddings @ params[:, :, 1]
        mask = present[:, np.newaxis]
        values = values[:, np.newaxis]
        output, weights = attention(
            q, k, values, scale=scale, temperature=settings.temperature, mask=mask
        )
        error = output - np.take_along_axis(values, targets[:, np.newaxis, :, np.newaxis], 2)
        loss = np.einsum("slbi,slbi->sl", error, error) / (BATCH * VALUE_DIM)
        grad_q, grad_k, _ = attention_backward(
            q,
            k,
            values,
            error * (2.0 / (BATCH * VALUE_DIM)),
            scale=scale,
            temperature=settings.temperature,
            mask=mask,
        )
        np.matmul(np.swapaxes(queries, -1, -2)[:, np.newaxis], grad_q, out=grads[:, :, 0])
        np.matmul(np.swapaxes(embeddings, -1, -2), grad_k, out=grads[:, :, 1])
        yield {
            "loss": loss,
            "accuracy": (weights.argmax(axis=-1) == targets[:, np.newaxis]).mean(axis=-1),
            "grad_norm": np.sqrt(np.einsum("slpmk,slpmk->sl", grads, grads)),
            "entropy": row_entropy(weights).mean(axis=-1),
            "jacobian_norm": np.median(softmax_jacobian_norm(weights), axis=-1),
        }
        if settings.optimizer == "sgd":
            grads *= rates
            params -= grads
            continue
        # Adam, in place: these arrays are the largest of a step at large d_k.
        beta1, beta2 = ADAM_BETAS
        first_moment *= beta1
        first_moment += np.multiply(grads, 1 - beta1, out=scratch)
        second_moment *= beta2
        np.multiply(grads, grads, out=scratch)
        scratch *= 1 - beta2
        second_moment += scratch
        np.sqrt(second_moment, out=scratch)
        scratch += ADAM_EPSILON
        np.divide(first_moment, scratch, out=scratch)
        scratch *= rates * (math.sqrt(1 - beta2 ** (step + 1)) / (1 - beta1 ** (step + 1)))
        params -= scratch


def iter_training(settings: TrainingSettings) -> Iterator[TrainingStep]:
    """Train the retrieval head step by step, yielding each step's measurements as it goes.

    The streaming form of :func:`train_retrieval` (same numbers), for a caller that draws
    curves while training runs and stops early by asking for no more steps.
    """
    metrics_by_step = _iter_runs(settings, [settings.seed], [settings.lr])
    for step, metrics in enumerate(metrics_by_step):
        yield TrainingStep(step=step, **{name: float(metrics[name][0, 0]) for name in METRICS})


def train_retrieval(
    d_k: int,
    *,
    scaled: bool,
    steps: int,
    lr: float,
    n: int = 16,
    d_model: int = DEFAULT_D_MODEL,
    seed: int = 0,
    optimizer: str = "adam",
    temperature: float = 1.0,
) -> TrainingRun:
    """Train the retrieval head for ``steps`` steps and return its per-step curves.

    The arguments are those of :class:`TrainingSettings`; the same seed gives the same run.

    Raises:
        ValueError: for any setting :class:`TrainingSettings` refuses.
    """
    settings = TrainingSettings(
        d_k=d_k,
        scaled=scaled,
        steps=steps,
        lr=lr,
        n=n,
        d_model=d_model,
        seed=seed,
        optimizer=optimizer,
        temperature=temperature,
    )
    records = list(iter_training(settings))
    return _finished_run(
        settings,
        {name: np.array([getattr(record, name) for record in records]) for name in METRICS},
    )


@dataclass(frozen=True)
class GridCell:
    """The runs of one (d_k, scaled) pair at the learning rate that served it best.

    ``lr`` is the grid's learning rate with the lowest mean final loss over the seeds (the
    smaller rate on a tie), ``final_loss_by_lr`` that mean for every rate of the grid, in the
    grid's order, and ``runs`` the runs at ``lr``, one per seed.
    """

    d_k: int
    scaled: bool
    lr: float
    final_loss_by_lr: tuple[float, ...]
    runs: tuple[TrainingRun, ...]

    @property
    def mean_loss(self) -> np.ndarray:
        """The loss curve averaged over the seeds."""
        return np.mean([run.loss for run in self.runs], axis=0)

    @property
    def final_loss(self) -> float:
        """Mean over the seeds of each run's final loss (its last tenth of steps)."""
        return float(np.mean([run.final_loss for run in self.runs]))

    def steps_to_loss(self, target_loss: float) -> int | None:
        """Steps after which the seeds' mean loss, averaged over the last ten, is ≤ target.

        ``None`` if that never happens within the runs' steps.
        """
        window = min(SMOOTHING_STEPS, self.runs[0].loss.shape[0])
        smoothed = np.convolve(self.mean_loss, np.full(window, 1.0 / window), mode="valid")
        reached = np.flatnonzero(smoothed <= target_loss)
        return int(reached[0]) + window if reached.size else None


@dataclass(frozen=True)
class ScaleComparison:
    """Scaled against unscaled at one d_k, each at its best learning rate.

    ``*_steps`` are the steps each took to reach the summary's target loss (``None``: not
    within the budget) and ``*_final_loss`` the mean final losses.
    """

    d_k: int
    scaled_lr: float
    unscaled_lr: float
    scaled_steps: int | None
    unscaled_steps: int | None
    scaled_final_loss: float
    unscaled_final_loss: float


@dataclass(frozen=True)
class GridSummary:
    """What a training grid shows, one :class:`ScaleComparison` per d_k, in the grid's order.

    ``steps`` is every run's budget and ``target_loss`` the loss whose steps are counted.
    """

    target_loss: float
    steps: int
    rows: tuple[ScaleComparison, ...]


@dataclass(frozen=True)
class TrainingGrid:
    """Every (d_k, scaled) cell of a grid of training runs, and their summary."""

    lrs: tuple[float, ...]
    seeds: tuple[int, ...]
    optimizer: str
    cells: tuple[GridCell, ...]
    summary: GridSummary

    def cell(self, d_k: int, scaled: bool) -> GridCell:
        """The cell of ``d_k`` with (``scaled=True``) or without the 1/√d_k scale.

        Raises:
            KeyError: if the grid has no such d_k.
        """
        for cell in self.cells:
            if cell.d_k == d_k and cell.scaled == scaled:
                return cell
        raise KeyError(f"the grid has no run at d_k={d_k}")


def _best_cell(
    settings: TrainingSettings, seeds: tuple[int, ...], lrs: tuple[float, ...]
) -> GridCell:
    """Train every (seed, lr) of one (d_k, scaled) pair and keep the best rate's runs."""
    curves: dict[str, list[np.ndarray]] = {name: [] for name in METRICS}
    for metrics in _iter_runs(settings, seeds, lrs):
        for name in METRICS:
            curves[name].append(metrics[name])
    stacked = {name: np.stack(values, axis=-1) for name, values in curves.items()}
    # stacked[name] has shape (seeds, lrs, steps); the final loss is over the last tenth.
    window = _final_window(settings.steps)
    final_by_lr = stacked["loss"][:, :, -window:].mean(axis=(0, 2))
    best = int(np.argmin(final_by_lr))
    runs = tuple(
        _finished_run(
            replace(settings, seed=seed, lr=lrs[best]),
            {name: stacked[name][index, best].copy() for name in METRICS},
        )
        for index, seed in enumerate(seeds)
    )
    return GridCell(
        d_k=settings.d_k,
        scaled=settings.scaled,
        lr=lrs[best],
        final_loss_by_lr=tuple(float(loss) for loss in final_by_lr),
        runs=runs,
    )


def training_grid(
    d_values: Sequence[int] = GRID_D_VALUES,
    seeds: Sequence[int] = GRID_SEEDS,
    steps: int = GRID_STEPS,
    lrs: Sequence[float] = GRID_LRS,
    *,
    n: int = 16,
    d_model: int = DEFAULT_D_MODEL,
    optimizer: str = "adam",
    temperature: float = 1.0,
    target_loss: float = TARGET_LOSS,
) -> TrainingGrid:
    """Train every d_k with and without the scale over a shared grid of learning rates.

    Scaled and unscaled runs get the same rates, seeds, data and initial weights; each keeps
    the rate with the lowest mean final loss over the seeds, so neither is judged at a rate
    that suits only the other. The summary counts the steps each needed to bring the seeds'
    mean loss to ``target_loss``.

    Raises:
        ValueError: for an empty or invalid ``d_values``, ``seeds`` or ``lrs``, or any
            setting :func:`train_retrieval` refuses.
    """
    if not d_values or not seeds or not lrs:
        raise ValueError("d_values, seeds and lrs must each hold at least one value")
    seed_list = tuple(positive_int("seed", seed, minimum=0) for seed in seeds)
    rate_list = tuple(sorted(positive_finite("lr", lr) for lr in lrs))
    target = positive_finite("target_loss", target_loss)
    cells = tuple(
        _best_cell(
            TrainingSettings(
                d_k=d_k,
                scaled=scaled,
                steps=steps,
                lr=rate_list[0],
                n=n,
                d_model=d_model,
                seed=seed_list[0],
                optimizer=optimizer,
                temperature=temperature,
            ),
            seed_list,
            rate_list,
        )
        for d_k in d_values
        for scaled in (True, False)
    )
    return grid_of_cells(
        cells,
        lrs=rate_list,
        seeds=seed_list,
        optimizer=optimizer,
        steps=steps,
        target_loss=target,
    )


def grid_of_cells(
    cells: Sequence[GridCell],
    *,
    lrs: Sequence[float],
    seeds: Sequence[int],
    optimizer: str,
    steps: int,
    target_loss: float = TARGET_LOSS,
) -> TrainingGrid:
    """The :class:`TrainingGrid` of ``cells`` (for each d_k in order, its scaled cell then
    its unscaled one, as :func:`training_grid` makes them), its summary counted from their
    runs: how :func:`training_grid` assembles a grid, and how a grid stored as its cells'
    curves is read back.

    Raises:
        ValueError: if the cells do not alternate scaled and unscaled at the same d_k.
    """
    pairs = list(zip(cells[::2], cells[1::2], strict=True))
    if not pairs or any(
        not scaled.scaled or unscaled.scaled or scaled.d_k != unscaled.d_k
        for scaled, unscaled in pairs
    ):
        raise ValueError("cells must hold, for each d_k, its scaled cell then its unscaled one")
    target = positive_finite("target_loss", target_loss)
    rows = tuple(
        ScaleComparison(
            d_k=scaled_cell.d_k,
            scaled_lr=scaled_cell.lr,
            unscaled_lr=unscaled_cell.lr,
            scaled_steps=scaled_cell.steps_to_loss(target),
            unscaled_steps=unscaled_cell.steps_to_loss(target),
            scaled_final_loss=scaled_cell.final_loss,
            unscaled_final_loss=unscaled_cell.final_loss,
        )
        for scaled_cell, unscaled_cell in pairs
    )
    return TrainingGrid(
        lrs=tuple(lrs),
        seeds=tuple(seeds),
        optimizer=str(optimizer),
        cells=tuple(cells),
        summary=GridSummary(target_loss=target, steps=int(steps), rows=rows),
    )


def _unscaled_verdict(row: ScaleComparison) -> str:
    """How the unscaled run compares at this d_k: 'about as fast' (within
    :data:`SPEED_FACTOR`), 'N× slower' or 'N× faster' when both reached the target (N their
    ratio of steps, two significant digits), else 'slower' or 'faster'."""
    scaled, unscaled = row.scaled_steps, row.unscaled_steps
    if scaled is not None and unscaled is not None:
        # A run that reaches the target at step 0 has nothing to be a multiple of.
        slow, fast = max(scaled, unscaled, 1), max(min(scaled, unscaled), 1)
        if slow < SPEED_FACTOR * fast:
            return "about as fast"
        word = "slower" if unscaled > scaled else "faster"
        return f"{slow / fast:.2g}× {word}"
    if scaled is not None:
        return "slower"
    if unscaled is not None:
        return "faster"
    # Neither reached the target: compare where they ended.
    if row.unscaled_final_loss >= SPEED_FACTOR * row.scaled_final_loss:
        return "slower"
    if row.scaled_final_loss >= SPEED_FACTOR * row.unscaled_final_loss:
        return "faster"
    return "about as fast"


def _join(items: Sequence[str]) -> str:
    """'a', 'a and b', 'a, b and c'."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _reach(steps: int | None) -> str:
    return "not reached" if steps is None else f"{steps} steps"


def describe_summary(summary: GridSummary) -> str:
    """A plain-English account of a grid's summary, every word of it computed from its numbers.

    It says at which d_k the scaled runs reached the target loss, and how the unscaled ones
    compared at each d_k: about as fast (within :data:`SPEED_FACTOR` of the steps), so many
    times slower or faster (both reached the target), or slower or faster (one missed it,
    or neither did and one ended with the higher loss), with the figures of both (unscaled
    first). The d_k with the same verdict are named together.
    """
    if not summary.rows:
        return "The grid holds no runs."
    target, budget = f"{summary.target_loss:g}", summary.steps
    reached = [row for row in summary.rows if row.scaled_steps is not None]
    missed = [row for row in summary.rows if row.scaled_steps is None]
    if not reached:
        scaled_part = (
            f"With the 1/√d_k scale the mean loss did not fall to {target} within {budget} "
            "steps at any d_k tried"
        )
    else:
        where = "at every d_k tried"
        if missed:
            where = f"at d_k = {_join([str(row.d_k) for row in reached])} but not at " + _join(
                [str(row.d_k) for row in missed]
            )
        steps_taken = ", ".join(f"{row.d_k}: {row.scaled_steps}" for row in reached)
        scaled_part = (
            f"With the 1/√d_k scale the mean loss fell to {target} within {budget} steps "
            f"{where} ({steps_taken} steps)"
        )
    # Verdicts in the order of their d_k, each with its d_k in that order.
    groups: dict[str, list[str]] = {}
    for row in summary.rows:
        if row.scaled_steps is None and row.unscaled_steps is None:
            detail = f"final loss {row.unscaled_final_loss:.2g} vs {row.scaled_final_loss:.2g}"
        else:
            detail = f"{_reach(row.unscaled_steps)} vs {_reach(row.scaled_steps)}"
        groups.setdefault(_unscaled_verdict(row), []).append(f"{row.d_k} ({detail})")
    clauses = [f"{verdict} at d_k = {_join(entries)}" for verdict, entries in groups.items()]
    return f"{scaled_part}. Without it, training was {'; '.join(clauses)}."
