"""``ensembo.spaces.load``: one entry point for every way to give a space.

Accepted: a :class:`Space`; a ConfigSpace ``ConfigurationSpace`` or its serialized
dict (``to_serialized_dict()`` / ConfigSpace's JSON files); a DSL document (dict); the
output of :meth:`Space.definition`; a path to a YAML/JSON/TOML document or ConfigSpace JSON;
or the name of a space registered under the registry kind ``space`` (the built-in
library registers ``spaces/library/*.yaml`` by file stem).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ConfigSpace import ConfigurationSpace

from ensembo.errors import SpaceError
from ensembo.spaces.check_components import check_components
from ensembo.spaces.compile import compile_spec, with_cause
from ensembo.spaces.document import plain_data, read_document_and_duplicates
from ensembo.spaces.options import ordered_options
from ensembo.spaces.parse import parse
from ensembo.spaces.problems import SpaceDefinitionError
from ensembo.spaces.space import Space
from ensembo.spaces.spec import SpaceSpec


def compile_document(document: Any, source: str = "") -> tuple[SpaceSpec, ConfigurationSpace, dict]:
    """Parse, check and compile; raises ``SpaceDefinitionError`` listing every problem."""
    normalized, non_finite = plain_data(document, source)
    normalized = ordered_options(normalized)
    spec, configspace, problems = _analyse(normalized, source, non_finite)
    if problems:
        raise SpaceDefinitionError(problems)
    return spec, configspace, normalized


def problems_in(source: Any) -> list[SpaceError]:
    """Every problem found in ``source`` (path or document); empty when it is valid."""
    try:
        document, name, duplicates = _document(source)
        normalized, non_finite = plain_data(document, name)
        normalized = ordered_options(normalized)
        if isinstance(normalized, Mapping) and not _is_dsl(normalized):
            if not non_finite:  # a definition or a serialized ConfigSpace
                _from_mapping(normalized, name, {})
            return non_finite + duplicates
    except SpaceError as error:
        return _each(error)
    return _analyse(normalized, name, non_finite)[2] + duplicates


def embedded_problems(document: Any, where: str) -> list[SpaceError]:
    """Every problem of a DSL space written inside another file (an experiment's
    ``space:``), each path prefixed with ``where`` (e.g. ``exp.yaml: space``) so it points
    into that file. Other forms (a serialized ConfigSpace, a definition) are checked
    when loaded."""
    if not isinstance(document, Mapping) or not _is_dsl(document):
        return []
    try:
        normalized, non_finite = plain_data(document)
        found = _analyse(ordered_options(normalized), "", non_finite)[2]
    except SpaceError as error:
        found = _each(error)
    return [SpaceError(f"{where}.{p.path}" if p.path else where, p.message) for p in found]


def _each(error: SpaceError) -> list[SpaceError]:
    """The problems ``error`` reports, one by one."""
    return list(error.problems) if isinstance(error, SpaceDefinitionError) else [error]


def _is_dsl(document: Mapping) -> bool:
    """Whether a mapping is a DSL document, not a definition or a serialized ConfigSpace
    (whose ``hyperparameters`` is a list: a mapping there is a DSL file that misnamed
    ``params``, and is told so)."""
    return "configspace" not in document and (
        "params" in document or not isinstance(document.get("hyperparameters"), list)
    )


def _read_file(path: Path) -> Any:
    """The document in ``path``; duplicate keys and infinite or NaN numbers are raised
    together with the document's other problems, as every problem of a definition is
    reported at once."""
    document, duplicates = read_document_and_duplicates(path)
    non_finite = plain_data(document, path.name)[1]
    if duplicates or non_finite:
        others = non_finite
        if isinstance(document, Mapping) and "params" in document:
            others = _analyse(ordered_options(document), path.name, non_finite)[2]
        raise SpaceDefinitionError([*others, *duplicates])
    if not isinstance(document, Mapping):  # empty, or a list: say so as `validate` does
        parse(document, path.name)[1].raise_if_any()
    return document


def _analyse(
    document: Any, source: str, non_finite: list[SpaceError]
) -> tuple[SpaceSpec | None, ConfigurationSpace | None, list[SpaceError]]:
    """(spec, ConfigurationSpace or None, problems) — every check, nothing raised.

    ``non_finite``: the infinities and NaNs of ``document`` (:func:`plain_data`), first
    round problems too; each stands for what the checks say at or under its path
    (``high: .inf`` "overflows the rounding")."""
    spec, problems = parse(document, source)
    configspace = None
    if spec is not None:
        if not problems and not non_finite:  # compile only a structurally sound spec
            configspace = compile_spec(spec, problems)
        check_components(spec, problems)
    return spec, configspace, [*non_finite, *_not_under(problems.items, non_finite)]


def _not_under(problems: list[SpaceError], non_finite: list[SpaceError]) -> list[SpaceError]:
    """``problems`` but those at or under the path of an infinity or NaN, which say again,
    less clearly, that the number is no bound, default or value."""
    def under(problem: SpaceError) -> bool:
        return any(
            problem.path == number.path or problem.path.startswith((f"{number.path}.",
                                                                    f"{number.path}["))
            for number in non_finite
        )

    return [problem for problem in problems if not under(problem)]


def _document(source: Any) -> tuple[Any, str, list[SpaceError]]:
    """(document, name for messages, duplicate-key problems)."""
    if isinstance(source, Mapping):
        return source, str(source.get("name", "")), []
    path = Path(source)
    if not path.suffix and not path.exists():
        provided = _registered(str(source))  # a library name, as load() takes it
        if not isinstance(provided, str | Path):
            return provided, str(source), []
        path = Path(provided)
    document, duplicates = read_document_and_duplicates(path)
    return document, path.name, duplicates


def load(source: Any, *, registry: Any = None, **options: Any) -> Space:
    """Return a :class:`Space` from any of the accepted forms (see module docstring).

    ``options`` (``impute``, ``encoding``) are passed to the Space. A library name is
    looked up in ``registry`` (the installed plugins by default).
    """
    _check_options(options)
    if isinstance(source, Space):
        return source._evolve(**options) if options else source
    if isinstance(source, ConfigurationSpace):
        return Space.from_configspace(source, **options)
    if isinstance(source, Mapping):
        return _from_mapping(source, str(source.get("name") or ""), options)
    if isinstance(source, str | Path):
        path = Path(source)
        if path.suffix or path.exists():  # "space.ymal" is a mistyped file, not a name
            return _from_mapping(_read_file(path), path.name, options)
        return load(_registered(str(source), registry), **options)
    raise SpaceError(
        "",
        f"cannot load a search space from {type(source).__name__}; give a library name, a "
        "path, a dict, a ConfigurationSpace or a Space",
    )


_OPTIONS = ("impute", "encoding")


def _check_options(options: Mapping[str, Any]) -> None:
    """Refuse what the Space would take apart with an unrelated error (a rule given as
    ``impute="none"`` failed as "dictionary update sequence element #0 ...")."""
    unknown = sorted(set(options) - set(_OPTIONS))
    if unknown:
        raise SpaceError("", f"unknown load option(s) {', '.join(unknown)}; valid: "
                             f"{', '.join(_OPTIONS)}")
    impute = options.get("impute")
    if impute is not None and not isinstance(impute, Mapping):
        raise SpaceError(
            "impute", f"expected a mapping {{hyperparameter: rule}}, got {impute!r}; for one "
            "rule for every hyperparameter, use space.with_imputation(rule)"
        )


def _from_mapping(source: Mapping, name: str, options: dict[str, Any]) -> Space:
    """A definition, a serialized ConfigSpace (its JSON format) or a DSL document."""
    if "configspace" in source:
        try:
            space = Space.from_definition(source)
        except SpaceError:
            raise
        except Exception as error:  # a hand-edited or truncated definition
            raise SpaceError(name, f"not a valid space definition: {error!r}") from error
        return space._evolve(**options) if options else space
    if not _is_dsl(source):
        try:
            configspace = ConfigurationSpace.from_serialized_dict(dict(source))
        except Exception as error:  # ConfigSpace raises several types for bad input
            raise SpaceError(
                name, f"not a valid serialized ConfigSpace: {with_cause(error)}"
            ) from error
        # an unnamed one takes its file's name, as a document does: its problems read
        # "space: ..." as if the experiment's space: key were wrong
        return Space.from_configspace(configspace, name=configspace.name or name or None,
                                      **options)
    return Space.from_document(source, source=name, **options)


def _registered(name: str, registry: Any = None) -> Any:
    from ensembo.registry import registry as installed

    try:
        entry = (registry or installed()).entry("space", name)
    except LookupError as error:
        raise SpaceError("", f"{error} Or give a path to a .yaml/.json/.toml file.") from None
    try:
        provided = entry.factory()
    except Exception as error:  # the plugin's bug: say whose, as for every other factory
        error.add_note(f"while building space {name!r} (from {entry.distribution})")
        raise
    if isinstance(provided, str | Path) and not Path(provided).exists():
        raise SpaceError(name, f"registered space file {provided} does not exist")
    return provided
