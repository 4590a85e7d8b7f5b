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
from ensembo.spaces.compile import compile_spec
from ensembo.spaces.document import SUFFIXES, normalize, read_document
from ensembo.spaces.options import ordered_options
from ensembo.spaces.parse import parse
from ensembo.spaces.space import Space
from ensembo.spaces.spec import SpaceSpec


def compile_document(document: Any, source: str = "") -> tuple[SpaceSpec, ConfigurationSpace, dict]:
    """Parse, check and compile; raises ``SpaceDefinitionError`` listing every problem."""
    normalized = ordered_options(normalize(document, source))
    spec, configspace, problems = _analyse(normalized, source)
    problems.raise_if_any()
    return spec, configspace, normalized


def problems_in(source: Any) -> list[SpaceError]:
    """Every problem found in ``source`` (path or document); empty when it is valid."""
    try:
        document, name = _document(source)
        normalized = normalize(document, name)
    except SpaceError as error:
        return [error]
    return list(_analyse(normalized, name)[2].items)


def _analyse(document: Any, source: str):
    """(spec, ConfigurationSpace or None, problems) — every check, nothing raised."""
    spec, problems = parse(document, source)
    configspace = None
    if spec is not None:
        if not problems:  # compile only a structurally sound spec
            configspace = compile_spec(spec, problems)
        check_components(spec, problems)
    return spec, configspace, problems


def _document(source: Any) -> tuple[Any, str]:
    if isinstance(source, Mapping):
        return source, str(source.get("name", ""))
    path = Path(source)
    return read_document(path), path.name


def load(source: Any, **options: Any) -> Space:
    """Return a :class:`Space` from any of the accepted forms (see module docstring).

    ``options`` (``impute``, ``encoding``) are passed to the Space.
    """
    if isinstance(source, Space):
        return source._evolve(**options) if options else source
    if isinstance(source, ConfigurationSpace):
        return Space.from_configspace(source, **options)
    if isinstance(source, Mapping):
        return _from_mapping(source, str(source.get("name", "")), options)
    if isinstance(source, str | Path):
        path = Path(source)
        if path.suffix.lower() in SUFFIXES or path.exists():
            return _from_mapping(read_document(path), path.name, options)
        return load(_registered(str(source)), **options)
    raise SpaceError(
        "",
        f"cannot load a search space from {type(source).__name__}; give a library name, a "
        "path, a dict, a ConfigurationSpace or a Space",
    )


def _from_mapping(source: Mapping, name: str, options: dict[str, Any]) -> Space:
    """A definition, a serialized ConfigSpace (its JSON format) or a DSL document."""
    if "configspace" in source:
        space = Space.from_definition(source)
        return space._evolve(**options) if options else space
    if "hyperparameters" in source and "params" not in source:
        try:
            configspace = ConfigurationSpace.from_serialized_dict(dict(source))
        except Exception as error:  # ConfigSpace raises several types for bad input
            raise SpaceError(name, f"not a valid serialized ConfigSpace: {error}") from error
        return Space.from_configspace(configspace, **options)
    return Space.from_document(source, source=name, **options)


def _registered(name: str) -> Any:
    from ensembo.registry import registry

    try:
        factory = registry().factory("space", name)
    except LookupError as error:
        raise SpaceError("", f"{error} Or give a path to a .yaml/.json/.toml file.") from None
    provided = factory()
    if isinstance(provided, str | Path) and not Path(provided).exists():
        raise SpaceError(name, f"registered space file {provided} does not exist")
    return provided
