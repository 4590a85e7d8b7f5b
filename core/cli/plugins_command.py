"""``ensembo plugins [NAME]``: every registered component with its kind and distribution,
or one component's description and options (what a spec ``{name: NAME, ...}`` takes)."""

from __future__ import annotations

import inspect
import json
import sys
import warnings
from collections.abc import Sequence
from functools import partial
from typing import Any

from ensembo.errors import EnsemboError, close_names
from ensembo.factory_signatures import (
    NO_DEFAULT,
    factory_options,
    foreign_bound_keywords,
    partial_binding_error,
    unwrap_partial,
)
from ensembo.plugin_checks import article
from ensembo.registry import PluginConflict, PluginEntry, Registry, registry
from ensembo.spaces.components import LazyEstimator, import_path

KIND_TITLES = {
    "surrogate": "surrogates",
    "acquisition": "acquisitions",
    "acquisition_optimizer": "acquisition optimizers",
    "initial_design": "initial designs",
    "ensemble_strategy": "ensemble strategies",
    "loss": "losses",
    "estimator": "estimators",
    "space": "spaces",
}
MIN_NAME_WIDTH = 24  # the listing's name column; longer names widen it


def register(subparsers) -> None:
    parser = subparsers.add_parser("plugins", help="list registered plugins, or show one")
    parser.add_argument("name", nargs="?", help="show this component's description and options")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument(
        "--check", action="store_true",
        help="run the conformance checks (ensembo.conformance) on the components called "
        "NAME; exit 1 if one fails",
    )
    parser.add_argument("--task", choices=("classification", "regression"),
                        help="the task to check a loss or an ensemble strategy for (--check)")
    parser.set_defaults(handler=run)


def run(args) -> int:
    reg = registry()
    if args.task and not args.check:
        raise EnsemboError("--task goes with --check (the task to check a loss or an "
                           "ensemble strategy for)")
    if args.check:
        if not args.name:
            raise EnsemboError("--check needs the NAME of the component to check")
        return check(reg, args.name, task=args.task, as_json=args.json)
    if args.name:
        return show(reg.entries(), args.name, as_json=args.json, conflicts=reg.conflicts)
    entries = [
        {"kind": e.kind, "name": e.name, "distribution": e.distribution} for e in reg.entries()
    ]
    failures = [
        {"distribution": f.distribution, "entry_point": f.entry_point, "error": f.error}
        for f in reg.failures
    ]
    conflicts = [
        {"kind": c.kind, "name": c.name, "distributions": list(c.distributions),
         "winner": c.winner}
        for c in reg.conflicts
    ]
    if args.json:
        print(
            json.dumps({"plugins": entries, "failures": failures, "conflicts": conflicts}, indent=2)
        )
        return 0
    # One column width for every kind, so that a long name does not push its row out.
    width = max([MIN_NAME_WIDTH, *(len(row["name"]) for row in entries)])
    claimants = {(c.kind, c.name): len(c.distributions)
                 for c in reg.conflicts if c.winner is None}
    for kind in reg.kinds:
        rows = [e for e in entries if e["kind"] == kind]
        print(f"{KIND_TITLES.get(kind, kind)}:")
        for row in rows:
            times = claimants.get((kind, row["name"]))
            clash = "" if times is None else (
                f" (unusable: registered {'twice' if times == 2 else f'{times} times'}, "
                "see conflict below)")
            print(f"  {row['name']:<{width}} {row['distribution']}{clash}")
        if not rows:
            print("  (none)")
    for failure in failures:
        print(
            f"failed to load {failure['entry_point']} from {failure['distribution']}: "
            f"{failure['error']}"
        )
    for conflict in reg.conflicts:
        print(conflict.describe())
    return 0


def _summary(target: Any) -> str:
    """First paragraph of the target's own docstring, else of its module's. A
    ``functools.partial`` is described by what it calls, not by partial's own docstring."""
    target, _ = unwrap_partial(target)
    own = target.__dict__.get("__doc__") if isinstance(target, type) else target.__doc__
    module = sys.modules.get(getattr(target, "__module__", None) or "")
    doc = inspect.cleandoc(own or getattr(module, "__doc__", None) or "")
    return " ".join(doc.split("\n\n")[0].split()).replace("``", "`")  # RST literals


def describe(entry: PluginEntry) -> dict[str, Any]:
    """Kind, name, distribution, a one-paragraph summary and the options with defaults."""
    item: dict[str, Any] = {"kind": entry.kind, "name": entry.name,
                            "distribution": entry.distribution}
    if entry.kind == "space":  # a space's factory gives its definition file
        return {**item, "summary": f"definition: {entry.factory()} (ensembo space show "
                                   f"{entry.name})", "options": {}}
    target = entry.factory
    if isinstance(target, LazyEstimator):  # describe the class it stands for
        target = import_path(target.path)
    options = factory_options(target)  # a partial's bound keywords are its defaults
    task = getattr(unwrap_partial(target)[0], "task", None)  # for one task (eo, segor)
    if isinstance(task, str):
        item["task"] = task
    if options is None:
        return {**item, "summary": _summary(target), "options": None,
                "options_unknown": _why_options_unknown(target)}
    return {
        **item, "summary": _summary(target),
        "options": {
            name: {"required": True} if default is NO_DEFAULT else {"default": _json_value(default)}
            for name, default in options.items()
        },
    }


def _why_options_unknown(factory: Any) -> str:
    """Why a factory's options cannot be listed. Not always ``**kwargs``: a partial binding
    a keyword its function does not take has no signature, and can never build."""
    if foreign := foreign_bound_keywords(factory):
        function, _ = unwrap_partial(factory)
        taken = factory_options(function) or {}
        return (f"the factory is a functools.partial of {_name(function)} binding "
                f"{', '.join(foreign)}, which it does not take: building it fails; "
                f"{_name(function)}'s options: {', '.join(taken) or 'none'}")
    if (reason := partial_binding_error(factory)) is not None:  # e.g. bound twice
        function, _ = unwrap_partial(factory)
        return (f"the factory is a functools.partial of {_name(function)} whose bound "
                f"arguments it cannot take ({reason}): building it fails")
    try:
        parameters = inspect.signature(factory).parameters.values()
    except (TypeError, ValueError):
        return "the factory's signature cannot be read"
    if any(p.kind is p.VAR_KEYWORD for p in parameters):
        return "the factory takes **kwargs"
    return "the factory's signature cannot be read"


def _name(function: Any) -> str:
    return getattr(function, "__qualname__", None) or repr(function)


def _json_value(value: Any) -> Any:
    """``value`` as JSON has it (``12``, ``"squared-margin"``, ``false``, ``null``), or
    its repr when JSON cannot hold it (an object, a tuple's element that is one)."""
    try:
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError):
        return repr(value)


def check(reg: Registry, name: str, *, task: str | None, as_json: bool) -> int:
    """Run :mod:`ensembo.conformance` on every checkable component called ``name``."""
    from ensembo import conformance

    checkers = {
        "surrogate": conformance.check_surrogate,
        "acquisition": conformance.check_acquisition,
        "acquisition_optimizer": conformance.check_acquisition_optimizer,
        "initial_design": conformance.check_initial_design,
        "ensemble_strategy": partial(conformance.check_ensemble_strategy,
                                     tasks=None if task is None else (task,)),
        "loss": partial(conformance.check_loss, task=task),
    }
    found = _named(reg.entries(), name)
    checkable = [e for e in found if e.kind in checkers]
    if not checkable:
        kinds = ", ".join(sorted({e.kind.replace("_", " ") for e in found}))
        raise EnsemboError(f"{name!r} is {article(kinds)} {kinds}; conformance checks exist "
                           "for every plugin kind but estimators and spaces")
    if task is None and any(e.kind == "loss" for e in checkable):
        raise EnsemboError(f"loss {name!r}: give --task classification or --task regression")
    if task is not None and not any(e.kind in _TASK_KINDS for e in checkable):
        raise EnsemboError(f"--task applies to losses and ensemble strategies; {name!r} is "
                           f"{article(checkable[0].kind)} {checkable[0].kind.replace('_', ' ')}")
    results = []
    for entry in checkable:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", conformance.ConformanceNote)
            try:
                _refuse_other_task(entry, task)
                passed, failures = checkers[entry.kind](name, registry=reg), []
            except conformance.ConformanceError as error:
                passed, failures = [], error.failures
        notes = _notes_kept_apart(caught, conformance.ConformanceNote)
        results.append({"kind": entry.kind, "name": name, "distribution": entry.distribution,
                        "passed": passed, "failures": [
                            {"check": check, "problem": problem} for check, problem in failures],
                        "notes": notes})
    if as_json:
        print(json.dumps(results, indent=2))
    for result in [] if as_json else results:
        kind = result["kind"].replace("_", " ")
        verdict = (f"{len(result['failures'])} check(s) failed" if result["failures"]
                   else f"{len(result['passed'])} checks passed")
        print(f"{kind} {name!r} (from {result['distribution']}): {verdict}")
        for failure in result["failures"]:
            print(f"  FAIL {failure['check']}: {failure['problem']}")
        for note in result["notes"]:
            print(f"  note: {note}")
    return 1 if any(result["failures"] for result in results) else 0


_TASK_KINDS = ("loss", "ensemble_strategy")


def _refuse_other_task(entry: PluginEntry, task: str | None) -> None:
    """A strategy for one task (``eo``) checked for the other would fail every check
    for that one reason, or pass unchecked: one failure that says so."""
    declared = _declared_task(entry)
    if entry.kind == "ensemble_strategy" and task and declared and declared != task:
        from ensembo.conformance import ConformanceError

        problem = f"ensemble strategy {entry.name!r} is for {declared} only, not {task}"
        raise ConformanceError(f"ensemble strategy {entry.name!r}", [("fits the task", problem)])


def _declared_task(entry: PluginEntry) -> str | None:
    """The one task a component is for, as its ``task`` attribute says (``eo``). A
    misspelt one is the conformance check's finding, not a task to refuse others by."""
    task = getattr(entry.factory, "task", None)
    return task if isinstance(task, str) and task in ("classification", "regression") else None


def _notes_kept_apart(caught: list[warnings.WarningMessage], note: type) -> list[str]:
    """The checks' notes, to print with the verdict; other warnings are shown as usual."""
    notes = []
    for warning in caught:
        if issubclass(warning.category, note):
            notes.append(str(warning.message))
        else:
            warnings.showwarning(warning.message, warning.category, warning.filename,
                                 warning.lineno)
    return notes


def _named(entries: list[PluginEntry], name: str) -> list[PluginEntry]:
    """The entries called ``name``; none is an error that suggests close names."""
    found = [e for e in entries if e.name == name]
    if not found:
        close = close_names(name, sorted({e.name for e in entries}), n=3)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
        raise EnsemboError(f"no registered component is called {name!r}{hint}")
    return found


def show(
    entries: list[PluginEntry],
    name: str,
    *,
    as_json: bool,
    conflicts: Sequence[PluginConflict] = (),
) -> int:
    found = [describe(e) for e in _named(entries, name)]
    if as_json:
        print(json.dumps(found, indent=2))
        return 0
    for number, item in enumerate(found):
        if number:
            print()
        print(f"{item['name']} ({item['kind'].replace('_', ' ')}, from {item['distribution']})")
        if item["summary"]:
            print(f"  {item['summary']}")
        if "task" in item:
            print(f"  task: {item['task']} only")
        _print_options(item)
        for conflict in conflicts:  # why another distribution's component is not used
            if (conflict.kind, conflict.name) == (item["kind"], item["name"]):
                print(f"  {conflict.describe()}")
    return 0


def _print_options(item: dict[str, Any]) -> None:
    options = item["options"]
    if item["kind"] == "space":
        return
    if options is None:
        print(f"  options: not declared ({item['options_unknown']})")
    elif not options:
        print("  options: none")
    else:
        print("  options:")
        width = max(map(len, options))
        for option, described in options.items():
            shown = "(required)" if "default" not in described else _shown(described["default"])
            print(f"    {option:<{width}}  {shown}")


def _shown(default: Any) -> str:
    """A default as an experiment file would write it (YAML: strings unquoted)."""
    return default if isinstance(default, str) else json.dumps(default)
