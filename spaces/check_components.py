"""Static checks of an executable space: every estimator importable, every argument known.

Run at load time so a typo in ``estimator:``, ``rename:`` or a hyperparameter name
surfaces as an error naming the document path, not as a crash on trial 57.
"""

from __future__ import annotations

import difflib

from ensembo.errors import SpaceError
from ensembo.spaces import components
from ensembo.spaces.options import option_name
from ensembo.spaces.plan import argument_params, argument_scopes, static_arguments
from ensembo.spaces.problems import Problems
from ensembo.spaces.reachability import activity_needs
from ensembo.spaces.spec import Component, SpaceSpec, join


def check_components(spec: SpaceSpec, problems: Problems) -> None:
    """Check every declared estimator, built or not: a space without ``steps`` skipped
    them all, so an option's SVC given ``tau`` was "valid" until a fit failed."""
    checked = []
    for step in spec.all_steps:
        if step.component is not None:
            checked.append((step.component, "", False))
        else:
            for option in spec.param(step.param).options:
                if option.component is not None:
                    checked.append((option.component, option.scope, True))
                elif spec.in_scope(option.scope):  # a skipped step has nothing to configure
                    problems.add(
                        option.path,
                        "an option without 'estimator' skips the step, so it "
                        "cannot hold hyperparameters; add an estimator or remove them",
                    )
    if spec.component is not None:
        checked.append((spec.component, "", True))
    step_params = spec.step_params
    for param in spec.params:
        for option in param.options:
            if option.component is not None and param.name not in step_params:
                checked.append((option.component, option.scope, True))
    for component, scope, with_params in checked:
        _check(spec, component, scope, with_params, problems)
    if spec.is_executable and spec.component is None:
        _unused_top_level(spec, problems)


def unbuilt_hint(spec: SpaceSpec) -> str:
    """Why a space that declares estimators builds none of them, and the fix: only
    ``steps`` and a top-level ``estimator`` build, so the options' estimators of a space
    without them are declarations only. Said when a build is asked for, not at load:
    such a space searches fine, and its stored studies must still load."""
    names = [param.name for param in spec.unbuilt_choices]
    if not names:
        return ""
    return (
        f"; the options of {', '.join(names)} declare estimators, but only 'steps' and a "
        f"top-level 'estimator' build: add steps: [{', '.join(names)}]"
    )


def _check(
    spec: SpaceSpec, component: Component, scope: str, with_params: bool, problems: Problems
) -> None:
    """Check one component: its ``by``, ``rename``, ``pack`` and ``fixed``, and that each
    estimator it names imports and takes the arguments it can be given."""
    if component.by is not None:
        _check_selector(spec, component, scope, problems)
    names = static_arguments(spec, component, scope, with_params)
    refused = _refused_locals(spec, component, scope) if with_params else set()
    _check_rename_and_pack(component, names, refused, problems)
    _check_rename_targets(component, _packed(component, names), problems)
    arguments = _arguments(component, names)
    for key, _ in component.fixed:
        if key in arguments:
            problems.add(
                join(component.path, f"fixed.{key}"), f"{key!r} is both fixed and a hyperparameter"
            )
    fixed = {key for key, _ in component.fixed}
    needs = activity_needs(list(spec.params))[0] if component.by is not None else {}
    for path, reference, option in _estimators(component):
        given = arguments  # a switched class gets only what can be active with its option
        if option is not None:
            active = _active_with(spec, component, scope, option, names, needs)
            given = _arguments(component, active)
        _check_reference(component, path, reference, given | fixed, problems)


def _check_selector(
    spec: SpaceSpec, component: Component, scope: str, problems: Problems
) -> None:
    by = next((p for p in spec.in_scope(scope) if p.local == component.by), None)
    if by is None and spec.refused.hides(scope + component.by):
        return  # refused, and reported, where it is written
    if by is None or by.kind not in ("choice", "categorical"):
        problems.add(
            join(component.path, "estimator.by"),
            f"{component.by!r} is not a choice in this scope",
        )
        return
    refused = {option for choice, option in spec.refused.options if choice == by.name}
    if {str(option_name(c)) for c in by.choices} != {
        o for o, _ in component.by_options if o not in refused
    }:
        problems.add(  # spelt as JSON writes them: true, not Python's True
            join(component.path, "estimator.options"),
            f"options must cover exactly the values of {component.by!r}: "
            f"{sorted(str(option_name(c)) for c in by.choices)}",
        )


def _refused_locals(spec: SpaceSpec, component: Component, scope: str) -> set[str]:
    """Local names of the hyperparameters refused (and reported) where ``component``
    takes its arguments from: not those under a nested option with its own estimator,
    nor those of another component, which a ``rename`` here cannot mean."""
    scopes = set(argument_scopes(spec, component, scope))
    return {
        param.local
        for param in spec.refused.params
        if param.name[: len(param.name) - len(param.local)] in scopes
    }


def _check_rename_and_pack(
    component: Component, names: set[str], refused: set[str], problems: Problems
) -> None:
    """Report a ``rename`` or ``pack`` of no hyperparameter here (but of one ``refused``),
    and a pack onto one."""
    for local, _ in component.rename:
        if local not in names and local not in refused:
            problems.add(
                join(component.path, f"rename.{local}"),
                f"no hyperparameter {local!r} here; known: {sorted(names)}",
            )
    for target, sources in component.pack:
        for source in sources:
            if source not in names and source not in refused:
                problems.add(
                    join(component.path, f"pack.{target}"),
                    f"no hyperparameter {source!r} here; known: {sorted(names)}",
                )
        if target in names and target not in sources:
            problems.add(
                join(component.path, f"pack.{target}"),
                f"{target!r} is already a hyperparameter here: the packed tuple would "
                "replace it; pack into another name (and rename it if needed)",
            )
        names = (names - set(sources)) | {target}


def _packed(component: Component, names: set[str]) -> set[str]:
    """``names`` once ``pack`` has gathered its sources into their targets."""
    for target, sources in component.pack:
        names = (names - set(sources)) | {target}
    return names


def _arguments(component: Component, names: set[str]) -> set[str]:
    """The estimator's argument names from hyperparameter ``names``: packed, renamed."""
    renames = dict(component.rename)
    return {renames.get(n, n) for n in _packed(component, names)} - {None}


def _estimators(component: Component) -> list[tuple[str, str, str | None]]:
    """(document path, estimator reference, option of ``by`` or None) of each class."""
    references = component.references
    options = [o for o, _ in component.by_options] if component.by else [None] * len(references)
    return [(path, ref, option) for (path, ref), option in zip(references, options, strict=True)]


def _active_with(
    spec: SpaceSpec, component: Component, scope: str, option: str, names: set[str], needs
) -> set[str]:
    """The ``names`` of hyperparameters that can be active when ``component.by`` takes
    ``option``: ``bootstrap`` with ``when: {algorithm: rf}`` never reaches the ``gb``
    class, and was refused as an argument it does not take. One whose activity the
    selector's value does not decide is kept."""
    selector = scope + component.by
    active = set()
    for param in argument_params(spec, component, scope):
        admitted = needs.get(param.name, {}).get(selector)
        if admitted is None or option in {str(option_name(value)) for value in admitted}:
            active.add(param.local)
    return active & names


def _check_reference(
    component: Component, path: str, reference: str, arguments: set[str], problems: Problems
) -> None:
    """Report an estimator that cannot be imported, or each argument it does not take
    where it is written."""
    try:
        factory = components.resolve(reference)
        accepted = components.accepted_arguments(factory)
    except (SpaceError, ImportError) as error:
        problems.add(path, error.message if isinstance(error, SpaceError) else str(error))
        return
    if accepted is None:
        return
    origins = _origins(component)
    for argument in sorted(arguments - accepted):
        origin = origins.get(argument)
        problems.add(
            join(component.path, origin) if origin else path,
            _unknown_argument(reference, argument, accepted, origin),
        )


def _check_rename_targets(component: Component, names: set[str], problems: Problems) -> None:
    """A rename onto a name another argument keeps, or two renames onto one name, would
    silently pass one value and drop the other."""
    renamed = {local for local, _ in component.rename}
    taken: dict[str, str] = {}
    for local, target in component.rename:
        if target is None or target == local:
            continue
        if target in names and target not in renamed:
            problems.add(
                join(component.path, f"rename.{local}"),
                f"{target!r} is already a hyperparameter here: renaming {local!r} onto it "
                "would overwrite it; rename one of them, or drop one with null",
            )
        elif target in taken:
            problems.add(
                join(component.path, f"rename.{local}"),
                f"{taken[target]!r} is renamed to {target!r} too: one would overwrite the other",
            )
        taken.setdefault(target, local)


def _origins(component: Component) -> dict[str, str]:
    """Argument -> the key that names it (``rename.C``, ``pack.sizes``, ``fixed.tol``), so
    a misspelt one is reported where it is written; hyperparameters are not in it."""
    origins = {target: f"rename.{local}" for local, target in component.rename if target}
    origins.update({target: f"pack.{target}" for target, _ in component.pack})
    origins.update({key: f"fixed.{key}" for key, _ in component.fixed})
    return origins


def _unknown_argument(reference: str, argument: str, accepted: set[str], origin) -> str:
    """The message for an argument the estimator does not take, with the fix that fits
    where it comes from: only a hyperparameter can be mapped with ``rename``."""
    close = difflib.get_close_matches(argument, sorted(accepted), n=1)
    message = f"{reference} takes no argument {argument!r}"
    if close:
        message += f" (did you mean {close[0]!r}?)"
    if origin is None:
        message += f"; map it with rename: {{{argument}: NAME}} (null drops it)"
    elif origin.startswith("rename.") and argument.lower() == "none":
        message += "; write null, unquoted, to drop it (YAML reads None as a string)"
    return f"{message}. Valid: {', '.join(sorted(accepted))}"


def _unused_top_level(spec: SpaceSpec, problems: Problems) -> None:
    for param in spec.in_scope(""):
        if param.name not in spec.step_params:
            problems.add(
                param.path,
                "no estimator uses this hyperparameter; add a top-level 'estimator' "
                "or move it into an option",
            )
