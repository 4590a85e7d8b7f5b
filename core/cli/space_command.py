"""``ensembo space show NAME|PATH`` and ``ensembo space validate NAME|PATH``."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

from ensembo import spaces
from ensembo.errors import EnsemboError, SpaceError
from ensembo.spaces.document import read_document_and_duplicates

VALIDATION_FAILED = 2
EXPERIMENT_KEYS = ("space", "data", "objective", "budget")  # none is a space file's key


def register(subparsers) -> None:
    parser = subparsers.add_parser("space", help="show or validate a search space")
    actions = parser.add_subparsers(dest="space_action", required=True, metavar="ACTION")
    show = actions.add_parser("show", help="print a space as a tree (library name or file)")
    show.add_argument("source", metavar="NAME|PATH")
    show.add_argument("--json", action="store_true", help="print the stored definition instead")
    show.set_defaults(handler=run_show)
    validate = actions.add_parser(
        "validate", help="check a space file or library space; print every problem"
    )
    validate.add_argument("path", metavar="NAME|PATH")
    validate.set_defaults(handler=run_validate)


def run_show(args) -> int:
    _refuse_directory(args.source)
    space = spaces.load(args.source)
    if args.json:
        import json

        print(json.dumps(space.definition(), indent=2))
    else:
        print(space.show())
    return 0


def run_validate(args) -> int:
    _refuse_directory(args.path)
    experiment_keys = _experiment_keys(args.path)
    if experiment_keys:
        listed = ", ".join(f"{key}:" for key in experiment_keys)
        print(f"{args.path}: this looks like an experiment file (it has {listed}), not a "
              "space file; give its space's file or library name, or 'ensembo run' it "
              "(which checks an inline space)", file=sys.stderr)
        return VALIDATION_FAILED
    problems = spaces.problems_in(args.path)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{args.path}: {len(problems)} problem(s)", file=sys.stderr)
        return VALIDATION_FAILED
    space = spaces.load(args.path)
    print(f"{args.path}: valid ({space.dimension} hyperparameters)")
    return 0


def _refuse_directory(source: str) -> None:
    """A folder has no suffix: "unknown file type ''" would not say what is wrong."""
    if Path(source).is_dir():
        raise SpaceError(source, "is a directory; give a space file (.yaml, .yml, .json, "
                         ".toml) or a library space's name")


def _experiment_keys(source: str) -> list[str]:
    """The experiment keys of ``source``'s top level when it has at least two and no
    ``params:``: an experiment file, whose keys would each be reported as unknown."""
    if not Path(source).is_file():
        return []
    try:
        document, _ = read_document_and_duplicates(source)
    except EnsemboError:
        return []
    if not isinstance(document, Mapping) or "params" in document:
        return []
    found = [key for key in EXPERIMENT_KEYS if key in document]
    return found if len(found) >= 2 else []
