"""``ensembo space show NAME|PATH`` and ``ensembo space validate NAME|PATH``."""

from __future__ import annotations

import sys

from ensembo import spaces

VALIDATION_FAILED = 2


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
    space = spaces.load(args.source)
    if args.json:
        import json

        print(json.dumps(space.definition(), indent=2))
    else:
        print(space.show())
    return 0


def run_validate(args) -> int:
    problems = spaces.problems_in(args.path)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"{args.path}: {len(problems)} problem(s)", file=sys.stderr)
        return VALIDATION_FAILED
    space = spaces.load(args.path)
    print(f"{args.path}: valid ({space.dimension} hyperparameters)")
    return 0
