"""Validation schemes: how the training data is split to score one configuration.

A scheme turns the targets and the trial number into train/validation index splits.
Without ``reshuffle`` the splits depend only on the seed, so every trial is scored on
the same validation set. With ``reshuffle`` (Lévesque ch. 3, the ``-r`` variants) new
splits are drawn for every trial from ``(seed, trial number)``: reproducible with the
seed, different from one iteration to the next.

Under k-fold every training example is validated once per repeat, so the per-example
predictions (out-of-fold) always cover the whole training set in its original order —
even with reshuffling. A holdout scheme validates a subset; reshuffled, that subset
changes every trial and there is no fixed validation set to build ensembles on.

A scikit-learn CV splitter (``KFold(5)``, ``StratifiedKFold(3, shuffle=True,
random_state=0)``) is used as it is, see :class:`SplitterScheme`.

Rows may belong to groups (patients, sites, sessions) that must not be split between
training and validation. Only a splitter that splits by groups (``GroupKFold(5)``,
``LeaveOneGroupOut()``) is given them; a scheme that would ignore them refuses them,
since its loss would leak across groups. :class:`GroupCrossValidation` and
:class:`GroupHoldout` (``{scheme: group-kfold}``, ``{scheme: group-holdout}``) are such
splitters, drawn from the seed as the other built-in schemes are.

Whether the targets allow a stratified split is decided in :mod:`ensembo.ml.stratification`.
"""

from __future__ import annotations

import numbers
import warnings
from collections.abc import Mapping
from typing import Any

import attrs
import numpy as np
from sklearn.model_selection import (
    GroupKFold,
    GroupShuffleSplit,
    KFold,
    ShuffleSplit,
    StratifiedKFold,
    StratifiedShuffleSplit,
)

from ensembo.checks import is_bool, is_fraction, is_whole_number
from ensembo.errors import ExperimentError
from ensembo.ml.stratification import can_stratify_folds, can_stratify_holdout

# Still imported from here, by ml/task.py.
from ensembo.ml.stratification import classes_rarer_than as classes_rarer_than
from ensembo.ml.stratification import holdout_sizes as holdout_sizes


@attrs.frozen(kw_only=True)
class Split:
    """Row indices of one fit (``train``) and of the rows it predicts (``validation``)."""

    train: np.ndarray = attrs.field(converter=np.asarray, eq=False)
    validation: np.ndarray = attrs.field(converter=np.asarray, eq=False)


def _refuse_groups(groups: np.ndarray | None, scheme: str, hint: str = "") -> None:
    """Groups given to a scheme that does not split by them would be ignored, and the
    rows of one group trained on and validated in the same split: the loss leaks."""
    if groups is not None:
        raise ExperimentError(
            "validation",
            f"{scheme} does not keep groups together, so rows of one group would be both "
            "trained on and validated (the loss leaks across groups): use a splitter that "
            f"splits by groups, such as GroupKFold(5) or LeaveOneGroupOut(){hint}",
        )


def _split_seed(seed: int, iteration: int, reshuffle: bool) -> int:
    entropy = [seed, iteration] if reshuffle else [seed]
    return int(np.random.default_rng(entropy).integers(2**31 - 1))


@attrs.frozen(kw_only=True)
class Holdout:
    """One split: ``ratio`` of the rows are held out for validation."""

    ratio: float = attrs.field(default=0.33, validator=is_fraction)
    stratify: bool = attrs.field(default=True, validator=is_bool)
    reshuffle: bool = attrs.field(default=False, validator=is_bool)

    @property
    def covers_all_rows(self) -> bool:
        return False

    @property
    def fixed_validation(self) -> bool:
        return not self.reshuffle

    @property
    def splits_by_groups(self) -> bool:
        return False

    def splits(
        self,
        y: np.ndarray,
        *,
        classification: bool,
        seed: int,
        iteration: int,
        groups: np.ndarray | None = None,
    ) -> tuple[Split, ...]:
        _refuse_groups(groups, f"a holdout (ratio {self.ratio})")
        random_state = _split_seed(seed, iteration, self.reshuffle)
        n = len(y)
        if classification and self.stratify and can_stratify_holdout(y, self.ratio):
            splitter = StratifiedShuffleSplit(
                n_splits=1, test_size=self.ratio, random_state=random_state
            )
        else:
            splitter = ShuffleSplit(n_splits=1, test_size=self.ratio, random_state=random_state)
        if n < 2:
            raise ExperimentError(
                "validation.ratio", f"a holdout needs at least 2 rows, got n_samples={n}"
            )
        train, validation = next(splitter.split(np.zeros((n, 1)), y))
        return (Split(train=np.sort(train), validation=np.sort(validation)),)


@attrs.frozen(kw_only=True)
class CrossValidation:
    """k-fold (stratified for classification), optionally repeated ``repeats`` times.

    Every row is predicted once per repeat; the per-example prediction is the mean over
    repeats of its out-of-fold predictions.
    """

    folds: int = attrs.field(default=5, validator=is_whole_number(2))
    repeats: int = attrs.field(default=1, validator=is_whole_number(1))
    stratify: bool = attrs.field(default=True, validator=is_bool)
    reshuffle: bool = attrs.field(default=False, validator=is_bool)

    @property
    def covers_all_rows(self) -> bool:
        return True

    @property
    def fixed_validation(self) -> bool:
        return True

    @property
    def splits_by_groups(self) -> bool:
        return False

    def splits(
        self,
        y: np.ndarray,
        *,
        classification: bool,
        seed: int,
        iteration: int,
        groups: np.ndarray | None = None,
    ) -> tuple[Split, ...]:
        _refuse_groups(groups, f"{self.folds}-fold cross-validation")
        random_state = _split_seed(seed, iteration, self.reshuffle)
        rng = np.random.default_rng(random_state)
        if len(y) < self.folds:
            raise ExperimentError(
                "validation.folds",
                f"{self.folds} folds need at least {self.folds} rows, got n_samples={len(y)}",
            )
        stratified = classification and self.stratify and can_stratify_folds(y, self.folds)
        splits = []
        for _ in range(self.repeats):
            state = int(rng.integers(2**31 - 1))
            splitter = (StratifiedKFold if stratified else KFold)(
                n_splits=self.folds, shuffle=True, random_state=state
            )
            with warnings.catch_warnings():
                # a class rarer than the folds: the task warns once, naming the class;
                # scikit-learn would warn on every trial
                warnings.filterwarnings(
                    "ignore", "The least populated class in y", category=UserWarning
                )
                pairs = list(splitter.split(np.zeros((len(y), 1)), y))
            splits.extend(Split(train=train, validation=validation) for train, validation in pairs)
        return tuple(splits)


def _declared_split_count(splitter: Any) -> int | None:
    """How many splits ``splitter`` says it gives; ``None`` when it needs the data to
    tell (``LeaveOneOut``), which always means several."""
    try:
        return int(splitter.get_n_splits())
    except (TypeError, ValueError):
        return None


def _gives_fixed_splits(splitter: Any) -> bool:
    """A splitter that shuffles without an int ``random_state`` draws other rows on
    every call (``None``: the global generator; a ``RandomState``: it advances)."""
    if not hasattr(splitter, "random_state") or not getattr(splitter, "shuffle", True):
        return True
    state = splitter.random_state
    return isinstance(state, numbers.Integral) and not isinstance(state, bool)


def _requests_groups(splitter: Any) -> bool | None:
    """Whether ``splitter.split`` splits by groups, as scikit-learn's metadata routing
    declares it (``GroupKFold`` and the other group splitters request ``groups``;
    ``KFold`` and ``TimeSeriesSplit`` do not); ``None`` for a splitter that declares
    nothing (not derived from scikit-learn's), which cannot be told."""
    routing = getattr(splitter, "get_metadata_routing", None)
    if not callable(routing):
        return None
    return routing().split.requests.get("groups") is True


# How a splitter of one's own says it splits by groups, as scikit-learn's group splitters do.
_DECLARE_GROUPS = (
    " (a splitter of your own that splits by groups declares it as scikit-learn's do: "
    "__metadata_request__split = {'groups': True})"
)


@attrs.frozen(kw_only=True)
class SplitterScheme:
    """A scikit-learn CV splitter, used as it is (the study's seed does not change it).

    Every trial must be scored on the same validation rows, so a splitter that shuffles
    needs an int ``random_state``. With several splits, each row's prediction is the
    mean of its out-of-fold predictions, as under k-fold, so every row must be
    validated at least once; a single split is a holdout.

    A splitter that splits by groups needs them, and only such a splitter is given them
    (see :func:`_requests_groups`); one that declares nothing is given them if any.
    """

    splitter: Any = attrs.field(eq=repr)

    def __attrs_post_init__(self) -> None:
        if not _gives_fixed_splits(self.splitter):
            raise ExperimentError(
                "validation",
                f"{self.splitter!r} shuffles with random_state="
                f"{self.splitter.random_state!r}, so every trial would be scored on other "
                "rows; the trials need the same validation rows: give it an int random_state",
            )

    @property
    def covers_all_rows(self) -> bool:
        return _declared_split_count(self.splitter) != 1

    @property
    def fixed_validation(self) -> bool:
        return True

    @property
    def splits_by_groups(self) -> bool | None:
        return _requests_groups(self.splitter)

    def splits(
        self,
        y: np.ndarray,
        *,
        classification: bool,
        seed: int,
        iteration: int,
        groups: np.ndarray | None = None,
    ) -> tuple[Split, ...]:
        self._check_groups(groups)
        rows = np.zeros((len(y), 1))
        data = (rows, y) if groups is None else (rows, y, groups)
        try:
            pairs = list(self.splitter.split(*data))
        except (TypeError, ValueError) as error:
            given = "y, no groups" if groups is None else "y and groups"
            raise ExperimentError(
                "validation",
                f"{self.splitter!r} cannot split these rows (it is given {given}): {error}",
            ) from error
        splits = tuple(Split(train=train, validation=validation) for train, validation in pairs)
        if self.covers_all_rows:
            self._check_every_row_validated(splits, len(y))
        return splits

    def _check_groups(self, groups: np.ndarray | None) -> None:
        uses_groups = _requests_groups(self.splitter)
        if uses_groups is False:
            _refuse_groups(groups, repr(self.splitter), _DECLARE_GROUPS)
        if uses_groups and groups is None:
            raise ExperimentError(
                "validation",
                f"{self.splitter!r} splits by groups, and no groups were given: give one "
                "group label per row, as in fit(X, y, groups=...)",
            )

    def _check_every_row_validated(self, splits: tuple[Split, ...], n_rows: int) -> None:
        validated = np.zeros(n_rows, dtype=bool)
        for split in splits:
            validated[split.validation] = True
        if not validated.all():
            missing = np.flatnonzero(~validated)
            raise ExperimentError(
                "validation",
                f"{self.splitter!r} never validates {missing.size} rows (e.g. rows "
                f"{missing[:5].tolist()}); with several splits every row needs an "
                "out-of-fold prediction, as KFold gives: use such a splitter, or one split",
            )


def _require_groups(groups: np.ndarray | None, scheme: str) -> np.ndarray:
    if groups is None:
        raise ExperimentError(
            "validation",
            f"{scheme} splits by groups, and no groups were given: give one group label "
            "per row (Task(groups=...), data.groups in an experiment file)",
        )
    return groups


class _ByGroups:
    """What the group schemes share: the seed, not the trial, decides the split (every
    trial is validated on the same groups), and the groups go to a scikit-learn group
    splitter, checked as any splitter is."""

    name = ""

    @property
    def fixed_validation(self) -> bool:
        return True

    @property
    def splits_by_groups(self) -> bool:
        return True

    def splits(
        self,
        y: np.ndarray,
        *,
        classification: bool,
        seed: int,
        iteration: int,
        groups: np.ndarray | None = None,
    ) -> tuple[Split, ...]:
        groups = _require_groups(groups, self.name)
        splitter = self._splitter(groups, _split_seed(seed, iteration, reshuffle=False))
        return SplitterScheme(splitter=splitter).splits(
            y, classification=classification, seed=seed, iteration=iteration, groups=groups
        )

    def _splitter(self, groups: np.ndarray, random_state: int) -> Any:
        raise NotImplementedError


@attrs.frozen(kw_only=True)
class GroupCrossValidation(_ByGroups):
    """k-fold over whole groups: all the rows of a group are validated in the same fold,
    so a model is never scored on a group it was trained on. The groups are dealt to
    the folds from the seed."""

    name = "group-kfold"
    folds: int = attrs.field(default=5, validator=is_whole_number(2))

    @property
    def covers_all_rows(self) -> bool:
        return True

    def _splitter(self, groups: np.ndarray, random_state: int) -> GroupKFold:
        n_groups = len(np.unique(groups))
        if n_groups < self.folds:
            raise ExperimentError(
                "validation.folds",
                f"{self.folds} folds of whole groups need at least {self.folds} groups, "
                f"got {n_groups}",
            )
        return GroupKFold(n_splits=self.folds, shuffle=True, random_state=random_state)


@attrs.frozen(kw_only=True)
class GroupHoldout(_ByGroups):
    """One split holding out whole groups, ``ratio`` of the groups (not of the rows)."""

    name = "group-holdout"
    ratio: float = attrs.field(default=0.33, validator=is_fraction)

    @property
    def covers_all_rows(self) -> bool:
        return False

    def _splitter(self, groups: np.ndarray, random_state: int) -> GroupShuffleSplit:
        return GroupShuffleSplit(n_splits=1, test_size=self.ratio, random_state=random_state)


ValidationScheme = (
    Holdout | CrossValidation | SplitterScheme | GroupCrossValidation | GroupHoldout
)

_EXPECTED = "a number of folds, a holdout ratio, a mapping or a scikit-learn CV splitter"


def validation_scheme(spec: object) -> ValidationScheme:
    """A scheme from a scheme, an integer (k folds), a real number (holdout ratio), a
    mapping, or a scikit-learn CV splitter (anything with ``split`` and ``get_n_splits``).

    Mappings: ``{scheme: holdout, ratio: 0.33, reshuffle: true}``,
    ``{scheme: kfold, folds: 5, repeats: 1, reshuffle: false}``, and for rows in groups
    ``{scheme: group-kfold, folds: 5}`` or ``{scheme: group-holdout, ratio: 0.33}``.
    """
    if isinstance(spec, ValidationScheme):
        return spec
    if isinstance(spec, bool):
        raise ExperimentError("validation", f"expected {_EXPECTED}, got {spec!r}")
    if isinstance(spec, numbers.Integral):
        return _folds(int(spec))
    if isinstance(spec, numbers.Real):
        return _holdout(float(spec))
    if isinstance(spec, Mapping):
        options = dict(spec)
        return _scheme(options.pop("scheme", "holdout"), options)
    if callable(getattr(spec, "split", None)) and hasattr(spec, "get_n_splits"):
        return SplitterScheme(splitter=spec)
    raise ExperimentError("validation", f"expected {_EXPECTED}, got {spec!r}")


def _folds(folds: int) -> CrossValidation:
    if folds < 2:
        raise ExperimentError(
            "validation", f"k-fold cross-validation needs at least 2 folds, got {folds}"
        )
    return _scheme("kfold", {"folds": folds})


def _holdout(ratio: float) -> Holdout:
    if not 0.0 < ratio < 1.0:
        raise ExperimentError(
            "validation", f"a holdout ratio must be between 0 and 1 (exclusive), got {ratio}"
        )
    return _scheme("holdout", {"ratio": ratio})


_SCHEMES = {
    "holdout": Holdout,
    "kfold": CrossValidation,
    "group-kfold": GroupCrossValidation,
    "group-holdout": GroupHoldout,
}


def scheme_mapping(scheme: ValidationScheme) -> dict[str, Any] | None:
    """The mapping :func:`validation_scheme` reads back as ``scheme``, every option
    written out: ``3`` and ``{scheme: kfold, folds: 3}`` are one setting and compare
    equal. ``None`` for a splitter object, which has no such mapping."""
    kind = next((name for name, cls in _SCHEMES.items() if type(scheme) is cls), None)
    return None if kind is None else {"scheme": kind, **attrs.asdict(scheme)}


def _scheme(kind: object, options: dict) -> ValidationScheme:
    if not isinstance(kind, str) or kind not in _SCHEMES:
        raise ExperimentError(
            "validation.scheme", f"unknown scheme {kind!r}; valid: {', '.join(_SCHEMES)}"
        )
    valid = [field.name for field in attrs.fields(_SCHEMES[kind])]
    unknown = sorted(set(options) - set(valid))
    if unknown:  # said "Holdout.__init__() got an unexpected keyword argument 'kind'"
        raise ExperimentError(
            "validation",
            f"unknown {kind} option(s) {', '.join(map(str, unknown))}; valid: scheme, "
            f"{', '.join(valid)}",
        )
    _check_options(_SCHEMES[kind], options)
    try:
        return _SCHEMES[kind](**options)
    except (TypeError, ValueError) as error:
        raise ExperimentError("validation", f"invalid {kind} options {options}: {error}") from error


def _check_options(scheme: type, options: Mapping[str, Any]) -> None:
    """Each option by its field's validator, so that the error names the option."""
    for field in attrs.fields(scheme):
        if field.name in options and field.validator is not None:
            try:
                field.validator(None, field, options[field.name])
            except (TypeError, ValueError) as error:
                raise ExperimentError(f"validation.{field.name}", str(error)) from error
