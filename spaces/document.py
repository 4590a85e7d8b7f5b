"""Reading DSL documents from YAML, JSON or TOML files.

Duplicate keys are errors (PyYAML and ``json`` silently keep the last one). Documents
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

SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses duplicate mapping keys, naming the line."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False):
    seen = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise SpaceError(
                f"line {key_node.start_mark.line + 1}",
                f"duplicate key {key!r} (names must be unique)",
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
# YAML 1.1 reads 1e5 and 1.0e5 (no exponent sign) as strings; read them as floats.
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = {}
    for key, value in pairs:
        if key in result:
            raise SpaceError("", f"duplicate key {key!r} (names must be unique)")
        result[key] = value
    return result


def read_document(path: str | Path) -> dict[str, Any]:
    """The document in ``path``, as plain JSON types; errors name the file."""
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
    try:
        if kind == "yaml":
            document = yaml.load(text, Loader=_UniqueKeyLoader)
        elif kind == "json":
            document = json.loads(text, object_pairs_hook=_unique_pairs)
        else:
            document = tomllib.loads(text)
    except SpaceError as error:
        raise SpaceError(f"{path.name}: {error.path}".rstrip(": "), error.message) from None
    except (yaml.YAMLError, json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise SpaceError(path.name, f"not valid {kind}: {error}") from None
    return normalize(document, path.name)


def normalize(document: Any, source: str = "") -> Any:
    """``document`` with JSON types only (tuples -> lists, keys -> strings)."""
    try:
        return json.loads(json.dumps(document, allow_nan=False))
    except (TypeError, ValueError) as error:
        raise SpaceError(
            source, f"the document must hold plain data (JSON types): {error}"
        ) from None
