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
"""

from __future__ import annotations

import attrs
import numpy as np
from sklearn.model_selection import KFold, ShuffleSplit, StratifiedKFold, StratifiedShuffleSplit

from ensembo.errors import ExperimentError


@attrs.frozen(kw_only=True)
class Split:
    """Row indices of one fit (``train``) and of the rows it predicts (``validation``)."""

    train: np.ndarray = attrs.field(converter=np.asarray, eq=False)
    validation: np.ndarray = attrs.field(converter=np.asarray, eq=False)


def _stratifiable(y: np.ndarray, n_splits: int) -> bool:
    """Stratify only when every class has enough members for every split."""
    _, counts = np.unique(y, return_counts=True)
    return counts.size > 1 and counts.min() >= n_splits


def _split_seed(seed: int, iteration: int, reshuffle: bool) -> int:
    entropy = [seed, iteration] if reshuffle else [seed]
    return int(np.random.default_rng(entropy).integers(2**31 - 1))


@attrs.frozen(kw_only=True)
class Holdout:
    """One split: ``ratio`` of the rows are held out for validation."""

    ratio: float = attrs.field(
        default=0.33, validator=[attrs.validators.gt(0.0), attrs.validators.lt(1.0)]
    )
    stratify: bool = True
    reshuffle: bool = False

    @property
    def covers_all_rows(self) -> bool:
        return False

    @property
    def fixed_validation(self) -> bool:
        return not self.reshuffle

    def splits(
        self, y: np.ndarray, *, classification: bool, seed: int, iteration: int
    ) -> tuple[Split, ...]:
        random_state = _split_seed(seed, iteration, self.reshuffle)
        n = len(y)
        if classification and self.stratify and _stratifiable(y, 2):
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

    folds: int = attrs.field(default=5, validator=attrs.validators.ge(2))
    repeats: int = attrs.field(default=1, validator=attrs.validators.ge(1))
    stratify: bool = True
    reshuffle: bool = False

    @property
    def covers_all_rows(self) -> bool:
        return True

    @property
    def fixed_validation(self) -> bool:
        return True

    def splits(
        self, y: np.ndarray, *, classification: bool, seed: int, iteration: int
    ) -> tuple[Split, ...]:
        random_state = _split_seed(seed, iteration, self.reshuffle)
        rng = np.random.default_rng(random_state)
        if len(y) < self.folds:
            raise ExperimentError(
                "validation.folds",
                f"{self.folds} folds need at least {self.folds} rows, got n_samples={len(y)}",
            )
        stratified = classification and self.stratify and _stratifiable(y, self.folds)
        splits = []
        for _ in range(self.repeats):
            state = int(rng.integers(2**31 - 1))
            splitter = (StratifiedKFold if stratified else KFold)(
                n_splits=self.folds, shuffle=True, random_state=state
            )
            splits.extend(
                Split(train=train, validation=validation)
                for train, validation in splitter.split(np.zeros((len(y), 1)), y)
            )
        return tuple(splits)


ValidationScheme = Holdout | CrossValidation


def validation_scheme(spec: object) -> ValidationScheme:
    """A scheme from a scheme, an int (k folds), a float (holdout ratio) or a mapping.

    Mappings: ``{scheme: holdout, ratio: 0.33, reshuffle: true}`` or
    ``{scheme: kfold, folds: 5, repeats: 1, reshuffle: false}``.
    """
    if isinstance(spec, Holdout | CrossValidation):
        return spec
    if isinstance(spec, bool):
        raise ExperimentError(
            "validation", f"expected a number of folds, a holdout ratio or a mapping, got {spec!r}"
        )
    if isinstance(spec, int):
        if spec < 2:
            raise ExperimentError(
                "validation", f"k-fold cross-validation needs at least 2 folds, got {spec}"
            )
        return _scheme("kfold", {"folds": spec})
    if isinstance(spec, float):
        if not 0.0 < spec < 1.0:
            raise ExperimentError(
                "validation", f"a holdout ratio must be between 0 and 1 (exclusive), got {spec}"
            )
        return _scheme("holdout", {"ratio": spec})
    if isinstance(spec, dict):
        options = dict(spec)
        return _scheme(options.pop("scheme", "holdout"), options)
    raise ExperimentError(
        "validation", f"expected a number of folds, a holdout ratio or a mapping, got {spec!r}"
    )


_SCHEMES = {"holdout": Holdout, "kfold": CrossValidation}


def _scheme(kind: object, options: dict) -> ValidationScheme:
    if not isinstance(kind, str) or kind not in _SCHEMES:
        raise ExperimentError(
            "validation.scheme", f"unknown scheme {kind!r}; valid: holdout, kfold"
        )
    try:
        return _SCHEMES[kind](**options)
    except (TypeError, ValueError) as error:
        raise ExperimentError("validation", f"invalid {kind} options {options}: {error}") from error
