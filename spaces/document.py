"""Reading DSL documents from YAML, JSON or TOML files.

Duplicate keys are errors (PyYAML and ``json`` silently keep the last one); they are
collected so they can be reported with the document's other problems. Documents
are normalized to plain JSON types so a stored definition compares equal to a fresh one.
"""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from ensembo.errors import SpaceError
from ensembo.spaces.problems import SpaceDefinitionError

SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that records duplicate mapping keys (with their line) in ``duplicates``,
    keeping the last value like PyYAML, so they are reported with every other problem."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self.duplicates: list[tuple[int, SpaceError]] = []  # (line, problem)


_TEXT_KEY_TAGS = {f"tag:yaml.org,2002:{kind}" for kind in ("bool", "int", "float", "null")}
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _key(loader: _UniqueKeyLoader, node: yaml.Node, deep: bool) -> Any:
    """A mapping key as written: keys become names (options, hyperparameters), and YAML
    1.1 would turn option ``on``/``off``/``yes``/``no`` into booleans (then "true"/
    "false") and ``0x10`` into 16. Plain scalar keys keep their text."""
    if isinstance(node, yaml.ScalarNode) and node.style is None and node.tag in _TEXT_KEY_TAGS:
        return node.value
    return loader.construct_object(node, deep=deep)


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    seen = set()
    for key_node, _ in node.value:  # written keys only: a merged (<<) key may be overridden
        if key_node.tag == _MERGE_TAG:
            continue
        key = _key(loader, key_node, deep)
        if key in seen:
            line = key_node.start_mark.line + 1
            loader.duplicates.append(
                (line, SpaceError(f"line {line}", f"duplicate key {key!r} (names must be unique)"))
            )
        seen.add(key)
    loader.flatten_mapping(node)  # YAML merge keys, as SafeLoader does
    return {
        _key(loader, key_node, deep): loader.construct_object(value_node, deep=deep)
        for key_node, value_node in node.value
    }


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
# YAML 1.1 reads 1e5 and 1.0e5 (no exponent sign) as strings; read them as floats.
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def load_yaml(text: str) -> tuple[Any, list[SpaceError]]:
    """(document, duplicate-key problems) of YAML ``text``, read as space files are: 1e5
    is a number, keys keep their text, duplicate keys are found (the last value kept).
    Raises ``yaml.YAMLError`` for invalid YAML."""
    loader = _UniqueKeyLoader(text)
    try:
        document = loader.get_single_data()
        # found outer mappings first (they are checked before their values are built)
        return document, [problem for _, problem in sorted(loader.duplicates, key=lambda d: d[0])]
    finally:
        loader.dispose()


def _unique_pairs(pairs: list[tuple[str, Any]], duplicates: list[SpaceError]) -> dict[str, Any]:
    result = {}
    for key, value in pairs:
        if key in result:
            duplicates.append(SpaceError("", f"duplicate key {key!r} (names must be unique)"))
        result[key] = value
    return result


def read_document(path: str | Path) -> dict[str, Any]:
    """The document in ``path``, as plain JSON types; errors name the file."""
    document, duplicates = read_document_and_duplicates(path)
    if duplicates:
        raise SpaceDefinitionError(duplicates)
    return document


def read_document_and_duplicates(path: str | Path) -> tuple[Any, list[SpaceError]]:
    """The document in ``path`` and its duplicate-key problems (paths name the file), so
    a caller can report them together with the problems of the document itself."""
    path = Path(path)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise SpaceError(
            str(path), f"unknown file type {path.suffix!r}; use one of {', '.join(SUFFIXES)}"
        )
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise SpaceError(str(path), f"cannot read: {error.strerror or error}") from None
    duplicates: list[SpaceError] = []
    try:
        if kind == "yaml":
            document, duplicates = load_yaml(text)
        elif kind == "json":
            document = json.loads(
                text, object_pairs_hook=lambda pairs: _unique_pairs(pairs, duplicates)
            )
        else:
            document = tomllib.loads(text)
    except (yaml.YAMLError, json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise SpaceError(path.name, f"not valid {kind}: {error}") from None
    named = [
        SpaceError(f"{path.name}: {error.path}".rstrip(": "), error.message) for error in duplicates
    ]
    return normalize(document, path.name), named


def normalize(document: Any, source: str = "") -> Any:
    """``document`` with JSON types only (tuples -> lists, keys -> strings)."""
    try:
        return json.loads(json.dumps(document, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise SpaceError(
            source, f"the document must hold plain data (JSON types): {error}"
        ) from None
