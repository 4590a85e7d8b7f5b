"""A :class:`ensembo.study.Study`'s arguments turned into what the study keeps: its
component specs, its ensemble context, and the description of it that a study file
stores (its meta), with the checks a study file needs before it is made; and the
arguments a stored study is made again with (``Study.load``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from os import PathLike
from typing import TYPE_CHECKING, Any

import numpy as np

from ensembo import components, defaults, spaces, stored_study
from ensembo.ensemble import EnsembleContext, context_classes
from ensembo.errors import ComponentOptionError, UnknownComponentError
from ensembo.loss_fit import check_loss_fits_context, check_storable_loss, task_the_loss_fits
from ensembo.registry import Registry
from ensembo.space_comparison import check_storable_space
from ensembo.storable import json_text
from ensembo.storage import Storage, open_existing_storage

if TYPE_CHECKING:
    from ensembo.study import Study

TASKS = ("classification", "regression")


def component_specs(
    space: spaces.Space, *, surrogate: Any, acquisition: Any, acquisition_optimizer: Any,
    initial_design: Any, ensemble: Any,
) -> dict[str, Any]:
    """The study's component specs by kind, ``AUTO`` replaced by the default for
    ``space``."""
    if surrogate == defaults.AUTO:
        surrogate = defaults.default_surrogate(space)
    if initial_design == defaults.AUTO:
        initial_design = defaults.default_initial_design()
    return {
        "surrogate": surrogate,
        "acquisition": acquisition,
        "acquisition_optimizer": acquisition_optimizer,
        "initial_design": initial_design,
        "ensemble_strategy": ensemble,
    }


def ensemble_context(
    *, loss: str | None, validation_targets: np.ndarray | None,
    classes: Sequence[Any] | None, task: str | None, budget: int | None, seed: int,
    registry: Registry | None,
) -> EnsembleContext:
    """What the ensemble strategy is told of the study; a task not given is the one the
    loss fits on the validation targets, when both are given."""
    if task is None and loss is not None and validation_targets is not None:
        task = task_the_loss_fits(
            components.build("loss", loss, registry), loss, np.asarray(validation_targets)
        )
    return EnsembleContext(
        y_true=None if validation_targets is None else np.asarray(validation_targets),
        loss=loss,
        task=task,
        **class_fields(classes, validation_targets, task),
        budget=budget,
        seed=seed,
        registry=registry,
    )


def check_loss(loss: Any, context: EnsembleContext, registry: Registry | None) -> None:
    """Build the loss and, given the task and the targets, try it on them (``mse`` for a
    classification task would otherwise fail at the first ensemble)."""
    check_loss_fits_context(components.build("loss", loss, registry), loss, context)


def class_fields(classes: Sequence[Any] | None, validation_targets: Any,
                 task: str | None) -> dict[str, Any]:
    """The context's classes, and whether they were read off the validation targets."""
    return {
        "classes": context_classes(classes, validation_targets, task),
        "classes_from_targets": classes is None,
    }


def check_storable(
    *, metadata: Mapping[str, Any], loss: str | None, specs: Mapping[str, Any],
    space: spaces.Space,
) -> None:
    """Refuse what a study file cannot keep, before the file is made."""
    json_text(metadata, label="metadata")
    check_storable_loss(loss)
    components.check_storable_specs(specs)
    check_storable_space(space)


def study_meta(
    *, space: spaces.Space, specs: Mapping[str, Any], n_initial: int, seed: int,
    context: EnsembleContext, given_classes: list[Any] | None,
    metadata: dict[str, Any], environments: list[Any],
) -> dict[str, Any]:
    """The description of the study that its storage keeps, to resume it from."""
    return {
        "format": stored_study.FORMAT,
        "space": space.definition(),
        "components": {
            kind: components.describe_for_storage(kind, spec)
            for kind, spec in specs.items()
        },
        "n_initial": n_initial,
        "seed": seed,
        "loss": context.loss,
        "task": context.task,
        "budget": context.budget,
        "validation_targets": None
        if context.y_true is None
        else context.y_true.tolist(),
        **({} if given_classes is None else {"classes": given_classes}),
        "metadata": metadata,
        "environments": environments,
    }


def load_stored(study_class: type[Study], storage: Storage | str | PathLike,
                overrides: Mapping[str, Any]) -> Study:
    """:meth:`Study.load`: the study kept in ``storage``, made with the arguments it was
    stored with and ``overrides``."""
    opened = open_existing_storage(storage)
    try:
        meta = opened.read_meta()
        kwargs = stored_study.resume_arguments(storage, meta)
        kwargs.update(overrides)
        stored_study.check_no_live_objects(storage, kwargs)
        return study_class(spaces.load(meta["space"]), storage=opened, **kwargs)
    except BaseException as failed:
        if opened is not storage:  # opened here: let go of the file
            opened.close()
        if isinstance(failed, ComponentOptionError):  # a rule newer than the study
            failed.add_note("the study was stored with these options; give the component "
                            "anew to Study.load, e.g. Study.load(path, "
                            "acquisition_optimizer={'name': 'lbfgs', 'n_sobol': 512})")
        if not isinstance(failed, UnknownComponentError):
            raise
        raise stored_study.plugin_not_installed(failed) from None
