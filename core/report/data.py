"""Everything a report shows, computed from a stored study as plain values.

Nothing here draws or formats: :func:`compute_report` reads the storage (without
opening a :class:`~ensembo.Study`, which would mark a live run's running trials as
interrupted), replays the ensemble strategy trial by trial to get the ensemble after
every iteration, and returns a :class:`ReportData` that the table and plot renderers
consume.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Mapping, Sequence
from os import PathLike
from typing import Any

import attrs
import numpy as np
from scipy.stats import rankdata

from ensembo import components, spaces, trial_table
from ensembo.ensemble import Ensemble, EnsembleContext, context_classes
from ensembo.errors import EnsemboError, StorageError
from ensembo.registry import Registry
from ensembo.report.scoring import ensemble_loss
from ensembo.storage import Storage, open_existing_storage
from ensembo.stored_study import stored_history
from ensembo.trials import History, Trial, TrialState, told_order

MIN_ACTIVE = 8
"""Fewest trials a hyperparameter must be active in to be ranked by importance."""
MAX_BINS = 5
"""Quantile bins a numeric hyperparameter's values are grouped into for importance."""
FINAL_CHOICE = "final_choice"
"""Key of the study metadata where ``ensembo run`` keeps the model it predicts with
(written by :func:`ensembo.ml.final.store_final_choice`; named here too so that a
report does not import scikit-learn)."""


@attrs.frozen(kw_only=True)
class HyperparameterSummary:
    """One dimension of the space as a reader wants to see it."""

    name: str
    kind: str
    domain: str
    log: bool = False


@attrs.frozen(kw_only=True)
class IterationPoint:
    """The state of the study right after it was told trial ``number``'s result (a
    report's points come in that order, :func:`replay_ensembles`)."""

    number: int
    state: TrialState
    loss: float | None
    best_so_far: float | None
    ensemble_loss: float | None
    ensemble: Ensemble | None = attrs.field(default=None, eq=False)


@attrs.frozen(kw_only=True)
class EnsembleMember:
    number: int
    weight: float
    loss: float | None
    config: dict[str, Any]
    info: dict[str, Any]


@attrs.frozen(kw_only=True)
class FinalChoice:
    """What ``ensembo run`` predicts with, as it stored it when it finished: the trial
    its ``final`` rule selected and the final ensemble (under ``best``, that trial)."""

    selection: str
    trial: Trial = attrs.field(eq=False)
    ensemble: Ensemble


@attrs.frozen(kw_only=True)
class ReportData:
    """A finished (or running) study, ready to render."""

    source: str
    space_name: str
    hyperparameters: tuple[HyperparameterSummary, ...]
    components: dict[str, Any]
    budget: int | None
    seed: int | None
    loss_name: str | None
    task: str | None
    trials: tuple[Trial, ...] = attrs.field(eq=False)
    counts: dict[str, int]
    best: Trial | None = attrs.field(eq=False)
    members: tuple[EnsembleMember, ...]
    final_ensemble_loss: float | None
    iterations: tuple[IterationPoint, ...]
    replay_note: str | None = None
    selected: FinalChoice | None = None
    selection_note: str | None = None
    strategy_advice: tuple[str, ...] = ()
    experiment: dict[str, Any] | None = None
    importance: tuple[tuple[str, float], ...] = ()
    space: Any = attrs.field(default=None, eq=False)
    environments: tuple[dict[str, Any], ...] = ()

    @property
    def info_keys(self) -> list[str]:
        """Metrics recorded in ``trial.info`` (validation/test errors...), sorted."""
        return trial_table.info_keys(self.trials)


def describe_space(space: spaces.Space) -> tuple[HyperparameterSummary, ...]:
    summaries = []
    for name in space.names:
        hp = space.hyperparameter(name)
        kind = type(hp).__name__.replace("Hyperparameter", "")
        if hasattr(hp, "choices"):
            domain = "{" + ", ".join(map(str, hp.choices)) + "}"
        elif hasattr(hp, "sequence"):
            domain = "(" + ", ".join(map(str, hp.sequence)) + ")"
        elif hasattr(hp, "lower"):
            domain = f"[{hp.lower:g}, {hp.upper:g}]"
        else:
            domain = str(getattr(hp, "value", ""))
        summaries.append(
            HyperparameterSummary(
                name=name, kind=kind, domain=domain, log=bool(getattr(hp, "log", False))
            )
        )
    return tuple(summaries)


def context_from_meta(
    meta: Mapping[str, Any], registry: Registry | None = None
) -> EnsembleContext:
    """The ensemble context the study ran with, rebuilt from its stored metadata: with
    its stored ``classes`` (those a holdout may lack: predictions have a column for
    each), as the study builds it."""
    targets = meta.get("validation_targets")
    y_true = None if targets is None else np.asarray(targets)
    task = meta.get("task")
    return EnsembleContext(
        y_true=y_true,
        loss=meta.get("loss"),
        task=task,
        classes=context_classes(meta.get("classes"), y_true, task),
        budget=meta.get("budget"),
        seed=int(meta.get("seed") or 0),
        registry=registry,
    )


def replay_ensembles(
    trials: Sequence[Trial], strategy: Any, context: EnsembleContext
) -> list[IterationPoint]:
    """Feed the trials to ``strategy`` in the order the study was told their results,
    recording each step; trials not finished come last, by number. In number order an
    order-dependent strategy (``eo``, ``segor``) built another ensemble than the study
    did whenever results came out of order (parallel workers, several asks before a
    tell), and the report showed that one."""
    history = History()
    asked = {t.number: Trial(number=t.number, config=t.config, state=TrialState.RUNNING)
             for t in trials}  # what a trial told later was while this one was told
    points = []
    best: float | None = None
    ensemble: Ensemble | None = None
    for trial in sorted(trials, key=lambda t: (not t.state.finished, told_order(t))):
        while len(history) < trial.number:
            history.put(asked[len(history)])
        history.put(trial)
        if trial.state is TrialState.COMPLETE:
            best = trial.loss if best is None else min(best, trial.loss)
            if strategy is not None:
                strategy.update(history, trial, context)
                ensemble = strategy.ensemble(history, context)
        points.append(
            IterationPoint(
                number=trial.number,
                state=trial.state,
                loss=trial.loss,
                best_so_far=best,
                # not told yet (running, queued): no ensemble loss "when told"
                ensemble_loss=ensemble_loss(history, ensemble, context)
                if trial.state.finished else None,
                ensemble=ensemble,
            )
        )
    return points


def hyperparameter_importance(
    space: spaces.Space, trials: Sequence[Trial]
) -> list[tuple[str, float]]:
    """Hyperparameters ranked by how much of the loss's variation their value explains.

    Over the trials where a hyperparameter is active, the loss ranks are grouped by its
    value — categories as they are, numeric values into up to ``MAX_BINS`` quantile
    bins (equal values always in the same bin; a hyperparameter with that few distinct
    values grouped by value), so a U-shaped effect counts as much as a monotonic one — and
    scored by the bias-corrected correlation ratio sqrt(epsilon²), in [0, 1] (0 when the
    groups explain no more than chance would). Hyperparameters active in fewer than
    ``MIN_ACTIVE`` trials (or 10 % of them) are left out. A screening aid, not a causal
    analysis.
    """
    done = [t for t in trials if t.state is TrialState.COMPLETE]
    if len(done) < MIN_ACTIVE or space.dimension == 0:
        return []
    min_active = max(MIN_ACTIVE, int(0.1 * len(done)))
    batch = space.encode([t.config for t in done])
    losses = np.array([t.loss for t in done], dtype=float)
    scores = []
    for column, name in enumerate(space.names):
        active = batch.active[:, column]
        values, loss_ranks = batch.values[active, column], rankdata(losses[active])
        if active.sum() < min_active or np.ptp(values) == 0 or np.ptp(loss_ranks) == 0:
            continue
        n_bins = max(2, min(MAX_BINS, len(values) // 4))
        if hasattr(space.hyperparameter(name), "choices") or len(np.unique(values)) <= n_bins:
            groups = values
        else:  # mid-ranks: equal values share a bin, never split by the trials' order
            groups = np.floor((rankdata(values, method="average") - 1) * n_bins / len(values))
        scores.append((name, _explained(groups, loss_ranks)))
    return sorted(scores, key=lambda pair: -pair[1])


def _explained(groups: np.ndarray, values: np.ndarray) -> float:
    """sqrt(epsilon²): the share of variance between groups, less what k groups of
    noise would explain, (SS_between - (k - 1) MS_within) / SS_total, clipped at 0."""
    labels = np.unique(groups)
    total = float(np.sum((values - values.mean()) ** 2))
    between = sum(
        (groups == g).sum() * (values[groups == g].mean() - values.mean()) ** 2 for g in labels
    )
    k, n = len(labels), len(values)
    if total <= 0 or k < 2 or n <= k:
        return 0.0
    within_mean_square = (total - between) / (n - k)
    return float(np.sqrt(max(between - (k - 1) * within_mean_square, 0.0) / total))


def _stored_components(meta: Mapping[str, Any], source: Any) -> dict[str, Any]:
    """The stored component specs, each a mapping with a ``name`` (or ``None``, or a
    live object's record): a plain name, which resume reads as a spec too, becomes
    ``{"name": ...}``; anything else is named as damaged, not an AttributeError in the
    tables."""
    stored = meta.get("components", {})
    if not isinstance(stored, Mapping):
        raise StorageError(f"{source}: the stored settings' components are a "
                           f"{type(stored).__name__}, not a mapping; the file is damaged: "
                           "restore it from a copy")
    specs = {}
    for kind, spec in stored.items():
        if isinstance(spec, str):
            spec = {"name": spec}
        elif spec is not None and not (
            isinstance(spec, Mapping) and ("name" in spec or components.live_object_name(spec))
        ):
            raise StorageError(
                f"{source}: the stored settings' components.{kind} is {json.dumps(spec)}, "
                "not a component name or a mapping with a 'name' key; the file is damaged: "
                "restore it from a copy"
            )
        specs[kind] = spec
    return specs


def _strategy(specs: Mapping[str, Any], registry: Registry | None) -> tuple[Any, str | None]:
    spec = specs.get("ensemble_strategy")
    if spec is None or components.live_object_name(spec):
        return None, "the ensemble strategy was a live object; ensembles were not replayed"
    try:
        return components.build("ensemble_strategy", spec, registry), None
    except EnsemboError as error:  # e.g. its plugin is no longer installed
        name = spec.get("name") if isinstance(spec, Mapping) else spec
        return None, (
            f"ensembles were not replayed: the study's ensemble strategy {name!r} cannot be "
            f"built here (is the plugin that provides it installed?): {error}"
        )


def replay_quietly(
    trials: Sequence[Trial], strategy: Any, context: EnsembleContext
) -> tuple[list[IterationPoint], tuple[str, ...]]:
    """:func:`replay_ensembles`, with the strategy's run-time advice (``UserWarning``,
    e.g. eo's "use a budget of at least ...") returned as text instead of warned
    again: the run it advises on is over. Other warnings are passed on."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        iterations = replay_ensembles(trials, strategy, context)
    advice: list[str] = []
    for warning in caught:
        if issubclass(warning.category, UserWarning):
            if str(warning.message) not in advice:
                advice.append(str(warning.message))
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    return iterations, tuple(advice)


def stored_final_choice(
    meta: Mapping[str, Any], trials: Sequence[Trial]
) -> tuple[FinalChoice | None, str | None]:
    """The final choice ``ensembo run`` stored, if it was made from these trials; else
    ``None`` and, when it matters, a note saying that the report shows the replay."""
    metadata = meta.get("metadata") or {}
    record = metadata.get(FINAL_CHOICE)
    if record is None:
        return None, _unrecorded_choice_note(metadata.get("experiment"))
    complete = sum(t.state is TrialState.COMPLETE for t in trials)
    number, selection = record.get("trial"), record.get("selection")
    if record.get("complete") != complete or not _all_complete(
        [number, *record.get("members", ())], trials
    ):  # a continued run stopped before it chose again
        return None, (
            f"the final choice stored when `ensembo run` last finished (trial {number}, "
            f"selected by {selection}) was made from {record.get('complete')} complete "
            f"trials and the study now has {complete}: the ensemble shown is the ensemble "
            "strategy's, replayed over the trials"
        )
    ensemble = Ensemble(
        members=record["members"],
        weights=record["weights"],
        size=record.get("size", len(record["members"])),
        combination=record.get("combination"),
    )
    return FinalChoice(selection=selection, trial=trials[number], ensemble=ensemble), None


def _all_complete(numbers: Sequence[Any], trials: Sequence[Trial]) -> bool:
    return all(
        isinstance(n, int) and 0 <= n < len(trials) and trials[n].state is TrialState.COMPLETE
        for n in numbers
    )


def _unrecorded_choice_note(experiment: Any) -> str | None:
    """For a ``data:`` study stored before ``ensembo run`` kept its final choice: the
    replay may name another trial than a selection rule chose."""
    settings = experiment.get("data") if isinstance(experiment, Mapping) else None
    final = settings.get("final", "argmin") if isinstance(settings, Mapping) else "argmin"
    if final == "argmin":
        return None
    return (
        "this study was stored before `ensembo run` recorded its final choice: the "
        "ensemble shown is the ensemble strategy's, replayed over the trials (under `best`, "
        f"the lowest validation loss), not necessarily the trial `final: {final}` selected; "
        "`ensembo resume` on the study records the choice"
    )


def compute_report(
    storage: Storage | str | PathLike, registry: Registry | None = None
) -> ReportData:
    """Read ``storage`` and compute every table and series a report shows."""
    opened = open_existing_storage(storage, read_only=True)
    try:
        meta = opened.read_meta()
        # checked as resume checks them: a missing row would misnumber every later one
        trials = tuple(stored_history(opened))
    finally:
        if opened is not storage and hasattr(opened, "close"):
            opened.close()
    if meta is None:
        raise StorageError(f"{storage}: no study stored here")
    space = spaces.load(meta["space"])
    context = context_from_meta(meta, registry)
    stored_components = _stored_components(meta, getattr(opened, "path", storage))
    strategy, note = _strategy(stored_components, registry)
    advice: tuple[str, ...] = ()
    try:
        iterations, advice = replay_quietly(trials, strategy, context)
    except EnsemboError as error:  # e.g. predictions the strategy needs are missing
        iterations, note = (
            replay_ensembles(trials, None, context),
            f"ensembles were not replayed: {error}",
        )
    final = iterations[-1] if iterations else None
    selected, selection_note = stored_final_choice(meta, trials)
    if selected is not None:  # what predicts, which under `best` may not be the argmin
        ensemble = selected.ensemble
        final_loss = ensemble_loss(trials, ensemble, context)
    else:
        ensemble = final.ensemble if final else None
        final_loss = final.ensemble_loss if final else None
    completed = [t for t in trials if t.state is TrialState.COMPLETE]
    return ReportData(
        source=str(storage),
        space_name=space.name,
        hyperparameters=describe_space(space),
        components=stored_components,
        budget=meta.get("budget"),
        seed=meta.get("seed"),
        loss_name=meta.get("loss"),
        task=meta.get("task"),
        trials=trials,
        counts={state.value: sum(t.state is state for t in trials) for state in TrialState},
        best=min(completed, key=lambda t: t.loss) if completed else None,
        members=_members(ensemble, trials),
        final_ensemble_loss=final_loss,
        iterations=tuple(iterations),
        replay_note=note,
        selected=selected,
        selection_note=selection_note,
        strategy_advice=advice,
        experiment=(meta.get("metadata") or {}).get("experiment"),
        importance=tuple(hyperparameter_importance(space, trials)),
        space=space,
        environments=tuple(meta.get("environments", ())),
    )


def _members(ensemble: Ensemble | None, trials: Sequence[Trial]) -> tuple[EnsembleMember, ...]:
    """The ensemble's members, heaviest first."""
    if ensemble is None:
        return ()
    return tuple(
        EnsembleMember(
            number=number,
            weight=weight,
            loss=trials[number].loss,
            config=dict(trials[number].config),
            info=dict(trials[number].info),
        )
        for number, weight in sorted(
            zip(ensemble.members, ensemble.weights, strict=True), key=lambda p: -p[1]
        )
    )
