"""Read-only dicts and lists for a trial's ``config`` and ``info``: the study's own
records, handed out without a copy, which a caller must not change in place."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

_READ_ONLY_ADVICE = ("a trial's config and info are the study's records and read-only; "
                     "for a copy you can change, use dict(trial.config) or dict(trial.info)")


def _refusal(kind: str) -> Callable[..., Any]:
    """A mutating method of a read-only record that raises, naming what was tried."""
    def refuse(self: Any, *args: Any, **kwargs: Any) -> Any:
        key = f" {args[0]!r}" if kind in ("set", "delete") and args else ""
        raise TypeError(f"cannot {kind}{key}: {_READ_ONLY_ADVICE}")
    refuse.__name__ = f"refuse_{kind}"
    return refuse


class ReadOnlyDict(dict):
    """A trial's ``config`` or ``info``: a dict (JSON, ``==``, pickling and copies as a
    dict's) that cannot be changed in place. ``study.best_trial.config`` is the study's
    own record, and changing it changed the best trial, the surrogate's data and
    ``trials_dataframe()`` but never the study file. ``dict(record)`` and
    ``record.copy()`` are plain dicts to change; ``copy.copy`` and ``copy.deepcopy``
    keep it read-only, as a copied trial's record."""

    __slots__ = ()
    __setitem__ = _refusal("set")
    __delitem__ = _refusal("delete")
    __ior__ = _refusal("update (|=)")
    update = _refusal("update")
    pop = _refusal("pop")
    popitem = _refusal("popitem")
    clear = _refusal("clear")
    setdefault = _refusal("setdefault")

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        # A dict subclass otherwise unpickles (and copies) through __setitem__.
        return type(self), (dict(self),)

    @classmethod
    def fromkeys(cls, keys: Iterable[Any], value: Any = None) -> ReadOnlyDict:
        return cls(dict.fromkeys(keys, value))


class ReadOnlyList(list):
    """A list nested in a trial's ``info`` (``info["tags"]``), read-only as the info is;
    equal to the list it was made from and written as one. ``list(record)`` is a plain
    list to change."""

    __slots__ = ()
    __setitem__ = _refusal("set")
    __delitem__ = _refusal("delete")
    __iadd__ = _refusal("extend (+=)")
    __imul__ = _refusal("repeat (*=)")
    append = _refusal("append")
    extend = _refusal("extend")
    insert = _refusal("insert")
    remove = _refusal("remove")
    pop = _refusal("pop")
    clear = _refusal("clear")
    sort = _refusal("sort")
    reverse = _refusal("reverse")

    def __reduce_ex__(self, protocol: Any) -> tuple[Any, ...]:
        # A list subclass otherwise unpickles (and copies) through append/extend.
        return type(self), (list(self),)


def _register_yaml_representers() -> None:
    """``yaml.safe_dump(trial.config)`` writes a mapping as for a dict (PyYAML's safe
    dumper refuses a dict subclass it does not know)."""
    import yaml  # a dependency, imported by ensembo already

    dumpers = [yaml.SafeDumper, yaml.Dumper]
    dumpers += [getattr(yaml, name) for name in ("CSafeDumper", "CDumper") if hasattr(yaml, name)]
    for dumper in dumpers:
        dumper.add_representer(ReadOnlyDict, yaml.representer.SafeRepresenter.represent_dict)
        dumper.add_representer(ReadOnlyList, yaml.representer.SafeRepresenter.represent_list)


_register_yaml_representers()


def read_only_config(value: Mapping[str, Any]) -> ReadOnlyDict:
    """A read-only private copy (a read-only one is shared, as nothing can change it), so
    neither a caller mutating its own dict nor one mutating the trial's changes a
    stored trial."""
    return value if type(value) is ReadOnlyDict else ReadOnlyDict(value)


def read_only(value: Any) -> Any:
    """``value`` with its dicts and lists, nested too, read-only; anything else (a tuple,
    a set, an object) as it is. A nested read-only one is shared, not rebuilt: a trial's
    info is made again at each change of state, and rebuilding its lists made loading
    3,000 trials with list-valued info 60% slower."""
    kind = type(value)
    if kind is dict or kind is ReadOnlyDict:
        return ReadOnlyDict({key: _shared_or_read_only(item) for key, item in value.items()})
    if kind is list:
        return ReadOnlyList([_shared_or_read_only(item) for item in value])
    return value


def _shared_or_read_only(value: Any) -> Any:
    kind = type(value)
    if kind is ReadOnlyList or kind is ReadOnlyDict:
        return value
    return read_only(value) if kind is dict or kind is list else value


def plain_copy(value: Any) -> Any:
    """``value`` with its read-only dicts and lists, nested too, as plain ones."""
    if type(value) in (dict, ReadOnlyDict):
        return {key: plain_copy(item) for key, item in value.items()}
    if type(value) in (list, ReadOnlyList):
        return [plain_copy(item) for item in value]
    return value
