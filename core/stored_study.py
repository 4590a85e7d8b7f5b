"""What a study keeps in its storage, and the checks before a storage is reused.

A storage holds one study. Continuing it with another space, seed or validation
targets would mix trials that cannot be compared, so that is refused; the other
settings may change between runs and are updated in place.
"""

from __future__ import annotations

import ast
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

import attrs

from ensembo import components, spaces
from ensembo.attribution import calling
from ensembo.errors import PluginContractError, StorageError, UnknownComponentError
from ensembo.protocols import Resumable
from ensembo.space_comparison import another_space, same_space
from ensembo.spaces.inactive_values import inactive_values
from ensembo.storage import Storage
from ensembo.storage.memory import MemoryStorage
from ensembo.trials import History, TrialState, json_text

logger = logging.getLogger(__name__)

FORMAT = 1
MODEL_STATE = "model_state"  # the proposer's Resumable state, with the surrogate it is of
# Metadata key: how the trials are scored (data, validation scheme, loss). Trials scored
# otherwise cannot be compared, so a study continues only with the same (when both say).
SCORING = "scoring"
# Key of a data experiment's scoring record: a digest of the loaded data (features,
# targets); records written before it was added lack it and are not compared by it.
DATA_DIGEST = "data_digest"


@attrs.frozen
class Continuation:
    """What a study continues with, and the description to store: decided by
    :func:`plan_continuation` before anything is written, so that a refused
    construction leaves the file as it was."""

    metadata: dict[str, Any]
    environments: list[Any]
    to_write: dict[str, Any] | None  # None: the stored description is already current
    changed: tuple[str, ...] = ()
    settings: tuple[str, ...] = ()

    def write(self, storage: Storage) -> None:
        """Store the description, once every check passed."""
        if self.to_write is None:
            return
        if self.changed:
            # The study continues with this call's settings; a later resume must use them too.
            logger.info("updating the stored study's %s", ", ".join(self.changed))
        if self.settings:  # a rerun that changes how the search goes should not be silent
            logger.warning("continuing %s with changed settings: %s",
                           getattr(storage, "path", "the stored study"), "; ".join(self.settings))
        storage.write_meta(self.to_write)


def plan_continuation(
    storage: Storage, current: dict[str, Any], completed: Sequence[Any] = ()
) -> Continuation:
    """Check that ``storage`` is new or holds the study ``current`` describes (whose
    ``completed`` trials are stored), and say what to write; writes nothing.

    The continuation's metadata and environments are the stored ones, extended by
    this run's.
    """
    stored = storage.read_meta()
    if stored is None:
        return Continuation(current["metadata"], current["environments"], current)
    check_same_study(storage, current, stored, completed)
    metadata = {**stored.get("metadata", {}), **current["metadata"]}
    recorded = stored.get("environments", [])
    environments = recorded + [e for e in current["environments"] if e not in recorded]
    merged = {**current, "metadata": metadata, "environments": environments}
    if MODEL_STATE in stored:
        merged[MODEL_STATE] = stored[MODEL_STATE]
    updated = json.loads(json_text(merged, sort_keys=False))  # its stored (JSON) form
    changed = tuple(
        sorted(key for key in updated if key != "space" and updated[key] != stored.get(key))
    )
    if not changed:
        return Continuation(metadata, environments, None)
    settings = tuple(_changed_settings(stored, updated))
    return Continuation(metadata, environments, updated, changed, settings)


def check_same_study(
    storage: Storage, current: dict[str, Any], stored: dict[str, Any], completed: Sequence[Any]
) -> None:
    """Refuse to continue a stored study whose trials this one could not compare with
    its own: another seed, space, validation targets or scoring."""
    if stored.get("seed") != current["seed"]:
        _refuse(storage, f"seed {stored.get('seed')} (given {current['seed']})")
    if not same_space(current["space"], stored.get("space")):
        _refuse_unloadable_space(storage, stored.get("space"))
        _refuse(storage, another_space(current["space"], stored.get("space")))
    # the scoring record first: it names what the user changed (data.dataset), of
    # which other validation targets are only the consequence
    check_same_scoring(storage, current["metadata"].get(SCORING),
                       stored.get("metadata", {}).get(SCORING))
    check_same_targets(storage, current["validation_targets"], stored.get("validation_targets"),
                       completed)


def _refuse_unloadable_space(storage: Storage, stored: Any) -> None:
    """A stored space this version cannot load is not "another space": say so, with
    why (a space an earlier version accepted and this one refuses)."""
    if stored is None:
        return
    try:
        spaces.load(json.loads(json.dumps(stored, sort_keys=True)))
    except Exception as error:  # any failure: a SpaceError, or a damaged definition
        where = getattr(storage, "path", "the storage")
        reason = str(error).replace("\n", "; ") or type(error).__name__
        raise StorageError(
            f"{where} holds a study whose stored space this version of ensembo cannot "
            f"load ({reason}); continue it with the version that made it, or choose a new "
            "storage path"
        ) from error


def _changed_settings(stored: dict[str, Any], updated: dict[str, Any]) -> list[str]:
    """'ensemble_strategy posthoc -> esmbo', 'budget 5 -> 7': what a rerun changed in
    the search itself (not its metadata or environment)."""
    old_components = stored.get("components") or {}
    new_components = updated.get("components") or {}
    changes = [
        f"{kind} {_spec_name(old_components.get(kind))} -> {_spec_name(new_components.get(kind))}"
        for kind in sorted(set(old_components) | set(new_components))
        if old_components.get(kind) != new_components.get(kind)
    ]
    changes += [
        f"{key} {stored.get(key)} -> {updated.get(key)}"
        for key in ("budget", "n_initial", "loss", "task")
        if _named(stored.get(key)) != _named(updated.get(key))
    ]
    return changes


def _named(setting: Any) -> Any:
    """A setting given by name as its spec mapping: the losses ``zero-one`` and
    ``{name: zero-one}`` are one loss, not a changed setting (two task names still
    differ as they did)."""
    return {"name": setting} if isinstance(setting, str) else setting


def _spec_name(spec: Any) -> str:
    is_named = isinstance(spec, dict) and "name" in spec
    return components.spec_text(spec) if is_named else json.dumps(spec)


@attrs.define
class ModelState:
    """The proposer's state (see :class:`ensembo.protocols.Resumable`), kept in the
    storage after each fit so that a resumed study proposes what the uninterrupted
    one would have. ``surrogate`` is the surrogate's stored description: a study
    resumed with another surrogate starts that one afresh."""

    storage: Storage
    surrogate: Any
    _last: Any = None

    def restore(self, proposer: Any, stored_trials: int) -> None:
        """Give a resumed ``proposer`` the state its last fit left, or the one before if
        the process died after storing the state and before the trial it proposed
        (``stored_trials``: how many trials the file holds)."""
        if not isinstance(proposer, Resumable):
            return
        saved = (self.storage.read_meta() or {}).get(MODEL_STATE)
        if saved is None or saved.get("surrogate") != json.loads(json.dumps(self.surrogate)):
            return
        state = saved["state"]
        if saved.get("for_trial", -1) >= stored_trials:  # that trial was never written
            state = saved.get("previous")
        if state is None:
            return
        with calling("proposer", proposer, "restore"):
            proposer.restore(state)
        self._last = state

    def save(self, proposer: Any, for_trial: int) -> None:
        """Store ``proposer``'s state if it changed, with the number of the first trial
        it proposed and the state before it: the state and that trial are two writes,
        and a resume after a crash between them must start from the earlier state (one
        more MCMC step moved every later proposal). A study in memory cannot be resumed
        and skips the copy."""
        if not isinstance(proposer, Resumable) or isinstance(self.storage, MemoryStorage):
            return
        owner = getattr(proposer, "surrogate", proposer)  # whose state() it is, for the note
        with calling("surrogate" if owner is not proposer else "proposer", owner, "state"):
            state = proposer.state()
            try:  # it is stored in the study file; compared as JSON (arrays have no ==)
                state = json.loads(json.dumps(state))
            except (TypeError, ValueError) as error:
                raise PluginContractError(
                    f"state() must return JSON values (numbers, strings, lists, dicts): {error}"
                ) from None
        if state is None or state == self._last:
            return
        meta = self.storage.read_meta()
        meta[MODEL_STATE] = {"surrogate": self.surrogate, "state": state,
                             "for_trial": for_trial, "previous": self._last}
        self.storage.write_meta(meta)
        self._last = state


def check_same_targets(
    storage: Storage, targets: list[Any] | None, stored: Any, completed: Sequence[Any] = ()
) -> None:
    """Trials scored against other validation targets cannot join one ensemble, and a
    study continued without its targets would lose them (and its ensembles)."""
    if stored is None:
        _check_targets_can_be_added(storage, targets, completed)
        return
    if targets is None:
        _refuse(storage, f"its trials scored on {len(stored)} validation targets, which "
                "were not given; pass validation_targets= again")
    if json.loads(json.dumps(targets)) != stored:
        _refuse(storage, f"its trials scored on other validation targets ({len(stored)} "
                f"stored, {len(targets)} given)")


def _check_targets_can_be_added(
    storage: Storage, targets: list[Any] | None, completed: Sequence[Any]
) -> None:
    """A study stored without validation targets has no predictions for them: its
    completed trials could never join an ensemble scored on them, and the stored
    targets would then be required of every later resume."""
    if targets is None:
        return
    unscored = [trial.number for trial in completed if trial.predictions is None]
    if unscored:
        shown = ", ".join(map(str, unscored[:10])) + (", ..." if len(unscored) > 10 else "")
        _refuse(storage, f"it was stored without validation targets and its completed "
                f"trials ({shown}) have no predictions for the {len(targets)} given; "
                "continue it without validation_targets=")


def check_same_scoring(storage: Storage, scoring: Any, stored: Any) -> None:
    """Trials scored with another validation scheme (3 folds, then 10) would be ranked
    and ensembled together although their losses do not compare."""
    if stored is None or scoring is None:
        return
    given = json.loads(json.dumps(scoring, default=str))
    if isinstance(stored, dict) and isinstance(given, dict):
        # a key the stored record lacks was not recorded then (an older version): not a
        # difference; a stored key the new record lacks is one (its value is now unset)
        given = {key: given.get(key) for key in stored}
        stored, given = _comparable_data(stored), _comparable_data(given)
    stored_digest = given_digest = None
    if isinstance(stored, dict) and isinstance(given, dict):  # copies: popped here only
        stored_digest, given_digest = stored.pop(DATA_DIGEST, None), given.pop(DATA_DIGEST, None)
    if _differences(stored, given):
        listing = "; ".join(f"{key} {old!r} stored, {new!r} given"
                            for key, old, new in _differences(stored, given))
        _refuse(storage, f"its trials were scored otherwise ({listing})")
    if stored_digest is not None and given_digest is not None and stored_digest != given_digest:
        _refuse(storage, changed_data_message(given.get("data")))


def changed_data_message(data: Any) -> str:
    """'the contents of dataset 'd.csv' (data.dataset) changed since ...'."""
    name = data.get("dataset") if isinstance(data, dict) else data
    return (
        f"the contents of dataset {name!r} (data.dataset) changed since the study started, "
        "so its trials were scored on other data (or this version reads it otherwise: "
        "text spelled none, null, na or nan is a level since 28 Nov 2026, no longer "
        "missing, and rows whose target is '?' or blank are dropped); restore the data, "
        "or start a new study with another storage"
    )


def _comparable_data(record: dict[str, Any]) -> dict[str, Any]:
    """A data experiment's record with its ``data:`` settings as they act on the scoring
    (defaults filled in; final, refit and threads left out), on both sides: records of
    earlier versions hold the mapping as written."""
    if "data" not in record or record["data"] is None:
        return dict(record)
    from ensembo.ml.data_run import scoring_settings  # imports scikit-learn

    settings = scoring_settings(record["data"])
    if settings is None:  # not a data: value this version reads: compared as written
        return dict(record)
    return {**record, "data": json.loads(json.dumps(settings, default=str))}


def _differences(stored: Any, given: Any, prefix: str = "") -> list[tuple[str, Any, Any]]:
    """(dotted key, stored value, given value) where two JSON values differ; mappings of
    another kind (a holdout and a k-fold ``scheme``) are one difference, shown whole."""
    if isinstance(stored, dict) and isinstance(given, dict) and not _other_kind(stored, given):
        return [
            difference
            for key in sorted(set(stored) | set(given), key=str)
            for difference in _differences(stored.get(key), given.get(key), f"{prefix}{key}.")
        ]
    if stored == given or _same_mapping_text(stored, given):
        return []
    return [(prefix.rstrip(".") or "scoring", stored, given)]


def _other_kind(stored: dict[str, Any], given: dict[str, Any]) -> bool:
    """Whether two mappings name another ``scheme`` or component ``name``: their options
    do not correspond, so listing them one by one says nothing."""
    return any(key in stored and key in given and stored[key] != given[key]
               for key in ("scheme", "name"))


def _same_mapping_text(stored: Any, given: Any) -> bool:
    """Two reprs of one mapping with its keys in another order: the estimators recorded
    a ``cv`` mapping in the order it was written until 28 Nov 2026 (sorted since)."""
    if not (isinstance(stored, str) and isinstance(given, str) and stored.startswith("{")):
        return False
    try:
        return ast.literal_eval(stored) == ast.literal_eval(given)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return False


def stored_classes(storage: Storage, given: list[Any] | None) -> list[Any] | None:
    """The classes a stored study's predictions have columns for, when it recorded them:
    reopened without ``classes=``, a study must not take them from the validation
    targets (a holdout may lack one); given others, it is another study."""
    stored = (storage.read_meta() or {}).get("classes")
    if stored is not None and given is not None and stored != given:
        _refuse(storage, f"classes {stored} (given {given})")
    return stored if given is None else given


def _refuse(storage: Storage, difference: str) -> NoReturn:
    where = getattr(storage, "path", "the storage")
    raise StorageError(
        f"{where} holds another study: {difference}. Resume it as stored with "
        "Study.load(path) or 'ensembo resume PATH', or choose a new storage path"
    )


def check_no_live_objects(storage: Any, arguments: dict[str, Any]) -> None:
    """Refuse to resume with a component that was a live object and was not passed
    again: rebuilt from nothing, a live surrogate would silently become random search."""
    live = {
        key: components.live_object_name(spec) or "an object"
        for key, spec in arguments.items()
        # None: a file from before live objects were marked (a None surrogate is random)
        if components.live_object_name(spec) or (spec is None and key in _LIVE_WHEN_NONE)
    }
    if live:
        named = ", ".join(f"{key} ({name})" for key, name in live.items())
        example = ", ".join(f"{key}=..." for key in live)
        raise StorageError(
            f"{storage}: the study was given objects that storage cannot rebuild: {named}; "
            f"pass them again: Study.load(path, {example})"
        )


_LIVE_WHEN_NONE = ("acquisition", "ensemble")


def plugin_not_installed(error: UnknownComponentError) -> UnknownComponentError:
    """A stored study's component whose plugin is not installed here: say so, and the
    way out (install it, or pass another to ``Study.load``)."""
    stored = (
        f"the stored study uses {error.kind} {error.name!r}: install the plugin that "
        "provides it, or pass another to Study.load"
    )
    hint = f"{error.hint}; {stored}" if error.hint else stored
    return UnknownComponentError(error.kind, error.name, error.available, hint)


def stored_history(storage: Any) -> History:
    """The stored trials as a history; a missing trial (a row deleted by hand or lost)
    would misnumber every later one, so the file is named as damaged."""
    try:
        return History(storage.trials())
    except ValueError as error:
        where = getattr(storage, "path", storage)
        raise StorageError(
            f"{where}: the stored trials are not numbered 0, 1, 2, ... ({error}); the file "
            "is damaged: restore it from a copy"
        ) from error


def without_inactive_values(storage: Any, space: Any, history: History) -> History:
    """``history`` with the values its trials hold for hyperparameters ``space`` makes
    inactive left out, where that is a configuration's only problem: finished trials keep
    them in the file, trials run again are run and stored without them. Studies stored
    before 'ne' required its parent active (759a049) hold such values, on which
    surrogates failed and which random search and TPE learned from."""
    found = inactive_values(space, [trial.config for trial in history])
    if not found.positions:
        return history
    trials = list(history)
    for position, config in zip(found.positions, found.configs, strict=True):
        trials[position] = attrs.evolve(trials[position], config=config)
    cause = ", likely stored before ensembo's 'ne' required its parent active (8 Dec 2026)"
    logger.warning(
        "%s: %d stored trials hold values for hyperparameters inactive in their "
        "configurations (%s)%s; they are read without them: finished trials keep them in "
        "the file, trials run again are run and stored without them",
        getattr(storage, "path", "the stored study"), len(found.positions),
        ", ".join(found.names), cause if found.ne_written else "",
    )
    return History(trials)


def resume_arguments(storage: Any, meta: dict[str, Any] | None) -> dict[str, Any]:
    """The ``Study`` arguments (all but the space) that a stored description records."""
    if meta is None:
        raise StorageError(f"{storage}: no study stored here")
    if meta.get("format") != FORMAT:
        raise StorageError(f"{storage}: storage format {meta.get('format')} is not supported")
    missing = [key for key in ("n_initial", "seed", "components", "space") if key not in meta]
    if missing:  # a hand-edited or damaged file; a KeyError named neither
        raise StorageError(f"{storage}: the stored settings lack {', '.join(missing)}; the "
                           "file is damaged: restore it from a copy")
    arguments: dict[str, Any] = {
        "n_initial": meta["n_initial"],
        "seed": meta["seed"],
        "loss": meta.get("loss"),
        "task": meta.get("task"),
        "budget": meta.get("budget"),
        "validation_targets": meta.get("validation_targets"),
        "classes": meta.get("classes"),
        "metadata": meta.get("metadata"),
    }
    for kind, spec in meta["components"].items():
        arguments[components.EXPERIMENT_KEYS.get(kind, kind)] = spec
    return arguments


def discard_if_nothing_ran(study: Any, path: Path) -> bool:
    """Close ``study`` and delete the study file it created at ``path`` (with its
    write-ahead log) if no trial ran; returns whether it did. A file holding only the
    settings of a run that was refused or stopped before its first trial would refuse
    the corrected run as another study. Only for a file the caller created: one that
    existed before is never deleted. (The ``.lock`` file stays: deleting a lock another
    process may be taking is unsafe.)

    An interrupted trial ran: a Ctrl-C during the first trial deleted the file that
    ``ensembo resume`` was told to continue, with whatever the trial had cost."""
    ran = (TrialState.RUNNING, TrialState.COMPLETE, TrialState.FAILED, TrialState.INTERRUPTED)
    if study.history.in_state(*ran):
        return False
    study.close()
    for name in (path.name, path.name + "-wal", path.name + "-shm"):
        path.with_name(name).unlink(missing_ok=True)
    return True
