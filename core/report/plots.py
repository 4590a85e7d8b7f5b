"""PNG figures of a :class:`ReportData`: convergence, ensemble composition, hyperparameters.

matplotlib is optional (the ``plots`` extra) and imported on first use. Figures are
drawn on :class:`matplotlib.figure.Figure` objects directly, never through pyplot, so
the report neither needs a display nor changes the caller's matplotlib state.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ensembo.errors import MissingDependencyError
from ensembo.report.data import ReportData
from ensembo.trials import TrialState

DECADES_FOR_LOG = 2.0
"""A loss axis is logarithmic when its positive values span at least this many decades."""

MAX_COMPOSITION_MEMBERS = 8
MAX_HYPERPARAMETER_PANELS = 6


def new_figure(width: float, height: float) -> Any:
    try:
        from matplotlib.figure import Figure
    except ImportError as error:
        raise MissingDependencyError("ensembo report's plots", "matplotlib", "plots") from error
    return Figure(figsize=(width, height), dpi=110, layout="constrained")


def save(figure: Any, path: Path) -> Path:
    figure.savefig(path)
    return path


def spans_decades(values: Sequence[float], decades: float = DECADES_FOR_LOG) -> bool:
    """True if every value is positive and max/min >= 10**decades."""
    array = np.asarray([v for v in values if v is not None], dtype=float)
    array = array[np.isfinite(array)]
    return bool(array.size and array.min() > 0 and np.log10(array.max() / array.min()) >= decades)


def use_log_scale(axis: Any, values: Sequence[float]) -> None:
    """A logarithmic axis with labels that do not collide.

    Over two decades or more, only powers of ten are labelled. Over a narrower range
    matplotlib would label every minor tick (2x10^-2, 3x10^-2, ... overlapping), so
    ticks go at 1, 2 and 5 times powers of ten, written plainly (0.05, 0.1, 0.2).
    """
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter

    axes = axis.axes
    if axis is axes.xaxis:
        axes.set_xscale("log")
    else:
        axes.set_yscale("log")
    axis.set_minor_formatter(NullFormatter())
    if not spans_decades(values):
        axis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axis.set_major_formatter(FormatStrFormatter("%g"))


def loss_label(data: ReportData) -> str:
    return f"validation loss ({data.loss_name})" if data.loss_name else "loss"


def _complete(data: ReportData):
    return [p for p in data.iterations if p.state is TrialState.COMPLETE]


def told_axis(data: ReportData) -> tuple[dict[int, int], str]:
    """Where each trial goes on the x axis, and the axis's label: its number while the
    results came in number order, else its place in the order told (the report's
    points follow that order, and steps drawn over numbers out of order went back and
    forth)."""
    places = {point.number: place for place, point in enumerate(data.iterations)}
    if all(number == place for number, place in places.items()):
        return places, "trial number"
    return places, "trials in the order their results came"


def plot_convergence(data: ReportData, path: Path) -> Path | None:
    """Every trial's loss, the best single so far and the ensemble's loss, per trial;
    ``None`` (no blank figure) while no trial has completed."""
    points = _complete(data)
    if not points:
        return None
    figure = new_figure(7.5, 4.5)
    axes = figure.add_subplot()
    x, x_label = told_axis(data)
    numbers = [x[p.number] for p in points]
    axes.scatter(numbers, [p.loss for p in points], s=14, color="0.6", label="trial loss", zorder=2)
    axes.step(
        numbers,
        [p.best_so_far for p in points],
        where="post",
        color="tab:blue",
        linewidth=2,
        label="best single so far",
        zorder=3,
    )
    ensemble = [(x[p.number], p.ensemble_loss) for p in points if p.ensemble_loss is not None]
    if ensemble and any(len(p.ensemble or ()) > 1 for p in points):
        axes.step(
            *zip(*ensemble, strict=True),
            where="post",
            color="tab:orange",
            linewidth=2,
            label="ensemble",
            zorder=4,
        )
    failed = [x[p.number] for p in data.iterations if p.state is TrialState.FAILED]
    if failed:
        for place in failed:
            axes.axvline(place, color="tab:red", alpha=0.25, linewidth=1)
        axes.plot([], [], color="tab:red", alpha=0.4, label=f"failed trial ({len(failed)})")
    shown = [p.loss for p in points] + [loss for _, loss in ensemble]
    log = spans_decades(shown)
    if log:
        use_log_scale(axes.yaxis, shown)
    elif points:
        _clip_outliers(axes, numbers, [p.loss for p in points], points[0].best_so_far)
    axes.set_xlabel(x_label)
    axes.set_ylabel(loss_label(data) + (" — log scale" if log else ""))
    axes.set_title(f"Convergence on {data.space_name}")
    axes.grid(True, which="major", alpha=0.3)
    axes.legend(loc="upper right", fontsize="small")
    return save(figure, path)


def _clip_outliers(axes: Any, x: Sequence[float], losses: Sequence[float], floor: float) -> None:
    """On a linear axis a few very bad trials squash the points that matter: cut the
    axis above the 90th percentile of the losses (or ``floor``, if higher) and mark
    the trials beyond it at the top edge."""
    array = np.asarray(losses, dtype=float)
    low = float(min(array.min(), 0.0 if array.min() >= 0 else array.min()))
    top = max(float(np.quantile(array, 0.9)), float(floor))
    top += 0.08 * (top - low)
    beyond = array > top
    if not beyond.any():
        return
    axes.set_ylim(bottom=low, top=top)
    axes.scatter(
        np.asarray(x)[beyond],
        np.full(beyond.sum(), top),
        marker="^",
        s=40,
        color="0.35",
        clip_on=False,
        zorder=5,
        label=f"loss above the axis ({beyond.sum()})",
    )


def composition_matrix(data: ReportData) -> tuple[list[int], list[str], np.ndarray]:
    """Places on the x axis (:func:`told_axis`), series labels and weights (len(x),
    series) for the stack plot.

    The final ensemble's members, then the members that carry the most weight over the
    run, get their own series; the rest are summed into "other trials".
    """
    points = [p for p in data.iterations if p.ensemble is not None]
    x, _ = told_axis(data)
    numbers = [x[p.number] for p in points]
    totals: dict[int, float] = {}
    for point in points:
        for member, weight in zip(point.ensemble.members, point.ensemble.weights, strict=True):
            totals[member] = totals.get(member, 0.0) + weight
    final = list(points[-1].ensemble.members) if points else []
    final = sorted(final, key=lambda m: -totals[m])[:MAX_COMPOSITION_MEMBERS]
    ranked = final + sorted((m for m in totals if m not in final), key=lambda m: -totals[m])
    shown = sorted(ranked[:MAX_COMPOSITION_MEMBERS])
    column = {member: i for i, member in enumerate(shown)}
    has_other = len(ranked) > len(shown)
    weights = np.zeros((len(points), len(shown) + has_other))
    for row, point in enumerate(points):
        for member, weight in zip(point.ensemble.members, point.ensemble.weights, strict=True):
            weights[row, column.get(member, len(shown))] += weight
    labels = [f"trial {m}" for m in shown] + (["other trials"] if has_other else [])
    return numbers, labels, weights


def plot_composition(data: ReportData, path: Path) -> Path | None:
    """Stacked weights of the ensemble members after each trial."""
    numbers, labels, weights = composition_matrix(data)
    if not numbers:
        return None
    figure = new_figure(7.5, 4.5)
    axes = figure.add_subplot()
    colors = [f"C{i % 10}" for i in range(len(labels))]
    if labels and labels[-1] == "other trials":
        colors[-1] = "0.75"
    x = [*numbers, numbers[-1] + 1]  # the last ensemble holds until the end of its trial
    weights = np.vstack([weights, weights[-1:]])
    lower = np.zeros(len(x))
    for series, (label, color) in enumerate(zip(labels, colors, strict=True)):
        upper = lower + weights[:, series]
        axes.fill_between(x, lower, upper, step="post", color=color, label=label, linewidth=0)
        lower = upper
    axes.set_xlim(x[0], x[-1])
    axes.set_ylim(0, 1)
    axes.set_xlabel(told_axis(data)[1])
    axes.set_ylabel("weight in the ensemble")
    spec = data.components.get("ensemble_strategy") or {}
    axes.set_title(f"Ensemble composition over time (strategy {spec.get('name', 'unknown')!r})")
    axes.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize="small", title="member")
    return save(figure, path)


def _categories(hp: Any) -> list[Any] | None:
    """The values of a categorical or ordinal hyperparameter, in order; None if numeric."""
    values = getattr(hp, "choices", None) or getattr(hp, "sequence", None)
    return None if values is None else list(values)


def plot_hyperparameters(data: ReportData, path: Path) -> Path | None:
    """Loss against the value of the hyperparameters most associated with it."""
    names = [name for name, _ in data.importance[:MAX_HYPERPARAMETER_PANELS]]
    trials = [t for t in data.trials if t.state is TrialState.COMPLETE]
    if not names or not trials:
        return None
    columns = min(3, len(names))
    rows = -(-len(names) // columns)
    figure = new_figure(4.0 * columns + 0.8, 3.4 * rows)
    grid = figure.subplots(rows, columns, squeeze=False)
    log_loss = spans_decades([t.loss for t in trials])
    scores = dict(data.importance)
    best = data.best
    scatter = None
    for index, axes in enumerate(grid.flat):
        if index >= len(names):
            axes.set_visible(False)
            continue
        name = names[index]
        hp = data.space.hyperparameter(name)
        active = [t for t in trials if name in t.config]
        losses = [t.loss for t in active]
        order = [t.number for t in active]
        choices = _categories(hp)
        if choices is not None:
            jitter = np.random.default_rng(0).uniform(-0.15, 0.15, len(active))
            x = np.array([choices.index(t.config[name]) for t in active]) + jitter
            long = len(choices) > 4 or max(len(str(c)) for c in choices) > 8
            axes.set_xticks(
                range(len(choices)),
                [str(c) for c in choices],
                rotation=35 if long else 0,
                ha="right" if long else "center",
            )
            axes.set_xlim(-0.5, len(choices) - 0.5)
        else:
            x = np.array([t.config[name] for t in active], dtype=float)
            if getattr(hp, "log", False):
                use_log_scale(axes.xaxis, x)
        scatter = axes.scatter(
            x, losses, c=order, cmap="viridis", s=16, vmin=0, vmax=max(len(data.trials) - 1, 1)
        )
        if best is not None and name in best.config:
            best_x = best.config[name] if choices is None else choices.index(best.config[name])
            axes.scatter(
                [best_x],
                [best.loss],
                marker="*",
                s=160,
                color="tab:red",
                edgecolor="black",
                zorder=5,
                label="best",
            )
        if log_loss:
            use_log_scale(axes.yaxis, losses)
        else:
            _clip_outliers(axes, x, losses, floor=min(losses))
        if axes.get_legend_handles_labels()[0]:
            axes.legend(loc="best", fontsize="small")
        axes.set_xlabel(name + (" (log scale)" if getattr(hp, "log", False) else ""))
        axes.set_ylabel(loss_label(data) if index % columns == 0 else "")
        axes.set_title(f"{name}  (score {scores[name]:.2f})", fontsize="medium")
        axes.grid(True, alpha=0.3)
    if scatter is not None:
        figure.colorbar(scatter, ax=grid, label="trial number", shrink=0.8)
    figure.suptitle(f"Loss against the most associated hyperparameters ({data.space_name})")
    return save(figure, path)


def plot_study(data: ReportData, out: Path) -> list[Path]:
    """Write every figure that applies to ``data`` into ``out``; return their paths."""
    written = [
        plot_convergence(data, out / "convergence.png"),
        plot_composition(data, out / "ensemble_composition.png"),
        plot_hyperparameters(data, out / "hyperparameters.png"),
    ]
    return [path for path in written if path is not None]
