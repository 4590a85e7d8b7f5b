"""Whether a stored study's space is the space given, and if not, what differs.

A study file keeps its space's definition; continuing it with another space would
rank losses of two searches together, so it is refused, naming the change (an
imputation rule, a bound, the conditions, an option's estimator). Names and
descriptions are labels.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from typing import Any

from ensembo import spaces
from ensembo.errors import SpaceError
from ensembo.spaces.parse_components import COMPONENT_KEYS
from ensembo.trials import json_text, unwritable

logger = logging.getLogger(__name__)


def _unnamed(part: Any) -> Any:
    """A part of a space definition without its ``name`` (the ConfigSpace and the
    document carry one too)."""
    return {k: v for k, v in part.items() if k != "name"} if isinstance(part, dict) else part


def _undescribed(document: Any) -> Any:
    """A (normalized) DSL document without its ``description`` texts, the space's,
    each hyperparameter's and each option's: documentation, like the name, so a
    reworded description is still the same space."""
    if not isinstance(document, dict):
        return document
    kept = {key: value for key, value in document.items() if key not in ("name", "description")}
    if isinstance(kept.get("params"), dict):
        kept["params"] = {name: _undescribed_param(body) for name, body in kept["params"].items()}
    return kept


def _undescribed_param(param: Any) -> Any:
    if not isinstance(param, dict):
        return param
    kept = {key: value for key, value in param.items() if key != "description"}
    if kept.get("type") == "choice" and isinstance(kept.get("options"), list):
        # normalized: a list of one-key mappings, option name -> body
        kept["options"] = [
            {name: _undescribed_option(body) for name, body in option.items()}
            if isinstance(option, dict) else option
            for option in kept["options"]
        ]
    return kept


def _undescribed_option(body: Any) -> Any:
    if not isinstance(body, dict):
        return body
    return {
        key: value if key in COMPONENT_KEYS else _undescribed_param(value)
        for key, value in body.items()
        if key != "description"
    }


def _comparable(value: Any) -> dict[str, Any]:
    """A space definition as two runs of one study give it: loaded after the JSON round
    trip the storage makes, without its labels (the name, the descriptions) and the
    space's meta (older study files kept none)."""
    loaded = spaces.load(json.loads(json_text(value))).definition()
    return {
        key: _undescribed(part) if key == "document" else _unnamed(part)
        if key == "configspace" else part
        for key, part in loaded.items()
        if key not in ("name", "meta")
    }


def same_space(definition: Any, stored: Any) -> bool:
    """Whether the stored space definition is the space ``definition`` describes.

    Compared after the same JSON round trip on both sides (the storage writes keys
    sorted), because the order of keys can change the order in which a definition's
    clauses compile, and so its ``definition()``, without changing the space. The name
    is a label (an inline space takes its experiment file's), not part of the space,
    and so are the ``description`` texts.
    """
    if stored is None:
        return False
    try:
        # as the study file writes them: a ``meta`` holding a numpy array (kept as a list)
        # made ``==`` raise "truth value of an array is ambiguous", and json.dumps refuse it
        if json_text(stored) == json_text(definition):
            return True
        return _comparable(stored) == _comparable(definition)
    except Exception:  # a stored space this version cannot read is another study
        logger.debug("the stored space could not be loaded", exc_info=True)
        return False


def check_storable_space(space: Any) -> None:
    """A study file keeps its space, ``meta`` included, so that a resume rebuilds it; an
    object in a ``meta`` failed in the JSON encoder, as if it were in a trial record."""
    places = [(space.configspace.meta, "the space's meta")]
    places += [(hp.meta, f"{hp.name}.meta") for hp in space.configspace.values()]
    for value, where in places:
        if value and (place := unwritable(value, where)) is not None:
            raise SpaceError(space.name, f"a study file cannot keep {place}: give numbers, "
                             "text, true/false, lists and mappings, or keep the study in memory")


def another_space(definition: Any, stored: Any, shown: int = 5) -> str:
    """'another space (y: upper 15.0 -> 16.0; z added)': which hyperparameters differ,
    the first ``shown`` of them, then what else differs (imputation, encoding,
    conditions, forbidden clauses, pipeline), so that the user sees what changed."""
    try:
        old, new = _comparable(stored), _comparable(definition)
    except Exception:  # a stored space this version cannot read: nothing to compare
        logger.debug("the stored space could not be loaded", exc_info=True)
        return "another space"
    old_hps, new_hps = _hyperparameters(old), _hyperparameters(new)
    notes = [
        note
        for name in sorted(set(old_hps) | set(new_hps))
        if (note := _hyperparameter_change(name, old_hps.get(name), new_hps.get(name)))
    ]
    notes += _space_changes(old, new, explained=bool(notes))
    if not notes:
        return "another space"
    more = f"; and {len(notes) - shown} more" if len(notes) > shown else ""
    return f"another space ({'; '.join(notes[:shown])}{more})"


def _hyperparameters(loaded: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """A comparable space definition's hyperparameters by name, each with its
    imputation rule and ensembo's ``q`` or the user's ``meta`` entries next to its
    ConfigSpace fields, but not ``meta['path']`` (where in the document it was
    written), as compared in their stored JSON form."""
    listed = json.loads(json.dumps(loaded["configspace"]["hyperparameters"]))
    rules = json.loads(json.dumps(loaded.get("impute") or {}))
    return {hp["name"]: _hyperparameter_fields(hp, rules.get(hp["name"])) for hp in listed}


def _hyperparameter_fields(hp: dict[str, Any], rule: Any) -> dict[str, Any]:
    fields = {key: value for key, value in hp.items() if key != "meta"}
    fields["imputation"] = rule  # the rule in force; meta['impute'] is only its default
    for key, value in (hp.get("meta") or {}).items():
        if key not in ("path", "impute"):
            fields["q" if key == "q" else f"meta[{key!r}]"] = value
    return fields


def _space_changes(old: dict[str, Any], new: dict[str, Any], explained: bool) -> list[str]:
    """What differs beyond the hyperparameters: the encoding, the clauses, then the
    document's entries by their path (an option's estimator, a step)."""
    notes = []
    if old.get("encoding") != new.get("encoding"):
        notes.append(f"encoding {old.get('encoding')!r} -> {new.get('encoding')!r}")
    old_cs, new_cs = old["configspace"], new["configspace"]
    for key, what in (("conditions", "its conditions"), ("forbiddens", "its forbidden clauses")):
        if json.dumps(old_cs.get(key)) != json.dumps(new_cs.get(key)):
            notes.append(f"{what} differ")
    return notes + _document_changes(old.get("document"), new.get("document"),
                                     explained or bool(notes))


def _document_changes(old: Any, new: Any, explained: bool) -> list[str]:
    """Each differing entry of the document as 'PATH OLD -> NEW', the path as a space
    file's problems name it. Once the hyperparameters or clauses explain the change,
    only what they cannot show is named: a component (estimator, fixed, rename, pack)
    and a top-level key such as ``steps``."""
    declared = {True: "a DSL document", False: "a ConfigSpace or definition"}
    if (old is None) != (new is None):
        return [f"declared as {declared[old is not None]} -> {declared[new is not None]}"]
    if old is None or new is None:
        return []
    return [
        _difference_text(path, before, after)
        for path, before, after in _differences(old, new, ())
        if not explained or _unseen_in_hyperparameters(path)
    ]


_ABSENT = object()
SHOWN_CHARACTERS = 60  # a removed option's whole body would drown the message


def _differences(old: Any, new: Any, path: tuple[str, ...]) -> Iterator[tuple]:
    """(path, old, new) for each entry that differs, ``_ABSENT`` where one side lacks it;
    a choice's options (a list of one-key mappings once normalized) by option name."""
    old_options, new_options = _by_name(old, path), _by_name(new, path)
    if old_options is not None and new_options is not None:
        if list(old_options) != list(new_options) and set(old_options) == set(new_options):
            yield path, list(old_options), list(new_options)  # the options reordered
        old, new = old_options, new_options
    if isinstance(old, dict) and isinstance(new, dict):
        for key in [*old, *(key for key in new if key not in old)]:
            yield from _differences(old.get(key, _ABSENT), new.get(key, _ABSENT), (*path, key))
    elif isinstance(old, list) and isinstance(new, list) and len(old) == len(new):
        for index, (old_item, new_item) in enumerate(zip(old, new, strict=True)):
            yield from _differences(old_item, new_item, (*path, f"[{index}]"))
    elif old != new:
        yield path, old, new


def _by_name(options: Any, path: tuple[str, ...]) -> dict[str, Any] | None:
    """A choice's normalized ``options`` list as a mapping, None for any other value."""
    if not (path and path[-1] == "options" and isinstance(options, list)):
        return None
    if not all(isinstance(option, dict) and len(option) == 1 for option in options):
        return None
    named = {name: body for option in options for name, body in option.items()}
    return named if len(named) == len(options) else None


def _unseen_in_hyperparameters(path: tuple[str, ...]) -> bool:
    """Whether no hyperparameter or clause reflects this entry: a top-level key beside
    ``params``, ``impute`` and ``forbidden``, or a component key of an option."""
    if not path or path[0] not in ("params", "impute", "forbidden"):
        return True
    return any(
        key in COMPONENT_KEYS and index >= 2 and path[index - 2] == "options"
        for index, key in enumerate(path)
    )


def _difference_text(path: tuple[str, ...], old: Any, new: Any) -> str:
    where = "".join(
        key if key.startswith("[") or not index else f".{key}"
        for index, key in enumerate(str(key) for key in path)
    )  # steps[0].imputer.fixed.strategy
    if old is _ABSENT:
        return f"{where} added ({_shown(repr(new))})"
    if new is _ABSENT:
        return f"{where} removed (was {_shown(repr(old))})"
    old_text, new_text = repr(old), repr(new)
    # long values cut from a little before where they first differ: cut at the start,
    # two estimator paths differing in their last characters read the same
    same = len(os.path.commonprefix([old_text, new_text]))
    start = max(0, same - SHOWN_CHARACTERS // 3) if same >= SHOWN_CHARACTERS // 2 else 0
    if start:  # from a word: '...BoostedTreesClassifierV1', not '...stedTreesClassifierV1'
        start = max(old_text.rfind(mark, 0, start) for mark in "./ ,:") + 1 or start
    return f"{where} {_shown(old_text, start)} -> {_shown(new_text, start)}"


def _shown(text: str, start: int = 0) -> str:
    body = text[start:]
    shown = body if len(body) <= SHOWN_CHARACTERS else body[: SHOWN_CHARACTERS - 3] + "..."
    return f"...{shown}" if start else shown


def _hyperparameter_change(name: str, old: dict | None, new: dict | None) -> str:
    if old is None:
        return f"{name} added"
    if new is None:
        return f"{name} removed"
    changes = [
        f"{key} {old.get(key)!r} -> {new.get(key)!r}"
        for key in sorted(set(old) | set(new))
        if old.get(key) != new.get(key)
    ]
    return f"{name}: {', '.join(changes)}" if changes else ""
