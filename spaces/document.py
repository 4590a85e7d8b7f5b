"""Reading DSL documents from YAML, JSON or TOML files.

Duplicate keys are errors (PyYAML and ``json`` silently keep the last one); they are
collected so they can be reported with the document's other problems. Documents
are normalized to plain JSON types so a stored definition compares equal to a fresh one.
"""

from __future__ import annotations

import io
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

from ensembo.errors import SpaceError
from ensembo.spaces.problems import Problems, SpaceDefinitionError

SUFFIXES = {".yaml": "yaml", ".yml": "yaml", ".json": "json", ".toml": "toml"}


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that keeps the text of plain scalar keys and reads ``1e5`` as a number.
    Duplicate keys are found on the composed node tree (:func:`_duplicate_keys`)."""


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
    loader.flatten_mapping(node)  # YAML merge keys, as SafeLoader does; the last value wins
    return {
        _key(loader, key_node, deep): loader.construct_object(value_node, deep=deep)
        for key_node, value_node in node.value
    }


def _duplicate_keys(root: yaml.Node) -> list[SpaceError]:
    """The written duplicate keys under ``root``, each at the path of the mapping holding
    it, with its line. A node reached again through an alias is checked once; a key
    merged in with ``<<`` may be overridden, so only the merged mapping's own keys count."""
    found: list[tuple[int, SpaceError]] = []
    visited: set[int] = set()

    def walk(node: yaml.Node, path: str) -> None:
        if id(node) in visited:
            return
        visited.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            for position, item in enumerate(node.value):
                walk(item, f"{path}[{position}]")
        if not isinstance(node, yaml.MappingNode):
            return
        seen: set[str] = set()
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE_TAG:
                walk(value_node, path)
                continue
            if not isinstance(key_node, yaml.ScalarNode):  # a mapping as key: not a name
                continue
            key = key_node.value  # keys become text once normalized: 1 and '1' are one key
            if key in seen:
                line = key_node.start_mark.line + 1
                message = f"duplicate key {key!r} on line {line} (names must be unique)"
                found.append((line, SpaceError(path, message)))
            seen.add(key)
            walk(value_node, f"{path}.{key}" if path else key)

    walk(root, "")
    return [problem for _, problem in sorted(found, key=lambda item: item[0])]


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
# YAML 1.1 reads 1e5 and 1.0e5 (no exponent sign) as strings; read them as floats.
_UniqueKeyLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$"),
    list("-+0123456789."),
)


def load_yaml(text: str) -> tuple[Any, list[SpaceError]]:
    """(document, duplicate-key problems) of YAML ``text``, read as space files are: 1e5
    is a number, keys keep their text, duplicate keys are found (the last value kept)
    at the path of their mapping. Raises ``yaml.YAMLError`` for invalid YAML."""
    loader = _UniqueKeyLoader(text)
    try:
        root = loader.get_single_node()
        if root is None:
            return None, []
        duplicates = _duplicate_keys(root)  # first: building flattens merged (<<) keys
        return loader.construct_document(root), duplicates
    finally:
        loader.dispose()


def _unique_pairs(pairs: list[tuple[str, Any]], duplicates: list[SpaceError]) -> dict[str, Any]:
    result = {}
    for key, value in pairs:
        if key in result:
            duplicates.append(SpaceError("", f"duplicate key {key!r} (names must be unique)"))
        result[key] = value
    return result


_JSON_SPACE = re.compile(r"[ \t\n\r]*")


def json_duplicates(text: str) -> list[SpaceError]:
    """The duplicate keys of valid JSON ``text``, each at the path of the mapping holding
    it, with its line: ``json`` gives neither. Run only once a duplicate is known."""
    found: list[SpaceError] = []
    decoder = json.JSONDecoder()

    def skip(index: int) -> int:
        return _JSON_SPACE.match(text, index).end()

    def value(index: int, path: str) -> int:
        """Walk the value at ``index``; the index after it."""
        index = skip(index)
        if text[index] == "{":
            return mapping(index, path)
        if text[index] == "[":
            return sequence(index, path)
        return decoder.raw_decode(text, index)[1]

    def mapping(index: int, path: str) -> int:
        seen = set()
        index = skip(index + 1)
        while text[index] != "}":
            key, end = json.decoder.scanstring(text, index + 1)
            if key in seen:
                line = text.count("\n", 0, index) + 1
                message = f"duplicate key {key!r} on line {line} (names must be unique)"
                found.append(SpaceError(path, message))
            seen.add(key)
            index = skip(value(skip(end) + 1, f"{path}.{key}" if path else key))
            index = skip(index + 1) if text[index] == "," else index
        return index + 1

    def sequence(index: int, path: str) -> int:
        index, position = skip(index + 1), 0
        while text[index] != "]":
            index = skip(value(index, f"{path}[{position}]"))
            index, position = (skip(index + 1) if text[index] == "," else index), position + 1
        return index + 1

    value(0, "")
    return found


def read_document(path: str | Path) -> dict[str, Any]:
    """The document in ``path``, as plain JSON types; errors name the file."""
    document, duplicates = read_document_and_duplicates(path)
    problems = [*plain_data(document, Path(path).name)[1], *duplicates]
    if problems:
        raise SpaceDefinitionError(problems)
    return document


def read_document_and_duplicates(path: str | Path) -> tuple[Any, list[SpaceError]]:
    """The document in ``path`` and its duplicate-key problems (paths name the file), so
    a caller can report them together with the problems of the document itself. The
    document has JSON types; an infinity or NaN is kept, for :func:`plain_data` to
    report with the rest."""
    path = Path(path)
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise SpaceError(
            str(path), f"unknown file type {path.suffix!r}; use one of {', '.join(SUFFIXES)}"
        )
    text = _text(path)
    duplicates: list[SpaceError] = []
    try:
        if kind == "yaml":
            document, duplicates = load_yaml(text)
        elif kind == "json":
            document = json.loads(
                text, object_pairs_hook=lambda pairs: _unique_pairs(pairs, duplicates)
            )
            duplicates = json_duplicates(text) if duplicates else []
        else:
            document = tomllib.loads(text)
    except (yaml.YAMLError, json.JSONDecodeError, tomllib.TOMLDecodeError) as error:
        raise SpaceError(path.name, f"not valid {kind}: {error}") from None
    named = [
        SpaceError(f"{path.name}: {error.path}".rstrip(": "), error.message) for error in duplicates
    ]
    return plain_data(document, path.name)[0], named


def _text(path: Path) -> str:
    """The text of ``path`` (:func:`utf8_text`), a problem named with the file."""
    try:
        return utf8_text(path.read_bytes())
    except OSError as error:
        raise SpaceError(str(path), f"cannot read: {error.strerror or error}") from None
    except ValueError as error:
        raise SpaceError(path.name, str(error)) from None


def utf8_text(data: bytes) -> str:
    """``data`` as UTF-8 text, whatever the locale; bytes that are not UTF-8 raise a
    ValueError naming the first bad byte and its line (they failed as a
    UnicodeDecodeError taken for a bug in ensembo). A leading byte order mark is
    dropped: editors (Notepad) write it in UTF-8 files, and the JSON and TOML readers
    refused it ('Unexpected UTF-8 BOM', 'Invalid statement')."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise ValueError(
            f"not UTF-8 text (byte {data[error.start]:#04x} at position {error.start}, "
            f"line {line}); save the file as UTF-8"
        ) from None
    text = text.removeprefix("\ufeff")
    return io.StringIO(text, newline=None).read()  # \r\n and \r as \n, as read_text() gave


def plain_data(document: Any, source: str = "") -> tuple[Any, list[SpaceError]]:
    """(``document`` with JSON types only (tuples -> lists, keys -> strings), a problem
    for each infinity or NaN in it, which JSON cannot hold).

    Those numbers stay in the document, so its other problems are found too: raised on
    its own, one ``high: .inf`` hid every other problem of the file."""
    try:
        normalized = json.loads(json.dumps(document))  # infinities and NaN survive
    except (TypeError, ValueError) as error:
        raise SpaceError(
            source, f"the document must hold plain data (JSON types): {error}"
        ) from None
    problems = Problems(source)
    for path, number in non_finite(normalized):
        problems.add(path, f"{number} is not a finite number; {_finite_advice(path)}")
    return normalized, problems.items


def non_finite(value: Any, path: str = "") -> list[tuple[str, float]]:
    """(path, number) of every infinity or NaN in ``value``, which JSON cannot hold:
    json only says "Out of range float values are not JSON compliant"."""
    if isinstance(value, float) and not math.isfinite(value):
        return [(path, value)]
    if isinstance(value, dict):
        items = [(f"{path}.{key}" if path else str(key), item) for key, item in value.items()]
    elif isinstance(value, list | tuple):
        items = [(f"{path}[{index}]", item) for index, item in enumerate(value)]
    else:
        return []
    return [found for where, item in items for found in non_finite(item, where)]


def _finite_advice(path: str) -> str:
    bound = {"low": "smallest", "high": "largest"}.get(path.rsplit(".", 1)[-1])
    if bound:
        return f"bounds must be finite: write the {bound} value worth searching"
    return "values must be finite (JSON has no infinity or NaN)"
