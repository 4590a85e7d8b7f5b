"""``ensembo plugins``: every registered component with its kind and distribution."""

from __future__ import annotations

import json

from ensembo.registry import registry

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


def register(subparsers) -> None:
    parser = subparsers.add_parser("plugins", help="list registered plugins")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args) -> int:
    reg = registry()
    entries = [
        {"kind": e.kind, "name": e.name, "distribution": e.distribution} for e in reg.entries()
    ]
    failures = [
        {"distribution": f.distribution, "entry_point": f.entry_point, "error": f.error}
        for f in reg.failures
    ]
    conflicts = [
        {"kind": c.kind, "name": c.name, "distributions": list(c.distributions)}
        for c in reg.conflicts
    ]
    if args.json:
        print(
            json.dumps({"plugins": entries, "failures": failures, "conflicts": conflicts}, indent=2)
        )
        return 0
    for kind in reg.kinds:
        rows = [e for e in entries if e["kind"] == kind]
        print(f"{KIND_TITLES.get(kind, kind)}:")
        for row in rows:
            print(f"  {row['name']:<24} {row['distribution']}")
        if not rows:
            print("  (none)")
    for failure in failures:
        print(
            f"failed to load {failure['entry_point']} from {failure['distribution']}: "
            f"{failure['error']}"
        )
    for conflict in conflicts:
        distributions = " and ".join(conflict["distributions"])
        print(f"conflict: {conflict['kind']} {conflict['name']!r} from {distributions}")
    return 0
