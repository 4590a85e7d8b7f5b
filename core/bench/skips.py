"""Runs skipped for a missing library, said once per command: which libraries are
missing and the command that installs each, so a user of a plain ``pip install``
learns why the anchors' runs did nothing instead of reading "8 runs executed"."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ensembo.errors import MissingDependencyError

SKIPPED = "skipped"


def missing_fields(error: MissingDependencyError) -> dict[str, str]:
    """What a skipped run's record keeps of its error beside the message: the missing
    package and the command that installs it (an ensembo extra, or the package itself
    when no extra installs it)."""
    install = (f"pip install {error.module}" if error.extra is None
               else f"pip install 'ensembo[{error.extra}]'")
    return {"missing_package": error.module, "install_command": install}


def skipped_records(records: Iterable[dict[str, Any] | None]) -> list[dict[str, Any]]:
    return [r for r in records if r is not None and r.get("status") == SKIPPED]


def library_count(skipped: Iterable[dict[str, Any]]) -> int:
    """How many libraries :func:`missing_libraries` names (a record without
    ``missing_package`` counts once per reason), for 'once it is' or 'once they are
    installed'."""
    return len({record.get("missing_package") or _reason(record) for record in skipped})


def _reason(record: dict[str, Any]) -> str:
    return str(record.get("error") or "no reason recorded").splitlines()[0]


def missing_libraries(skipped: Iterable[dict[str, Any]]) -> str:
    """``"smac, optuna (pip install 'ensembo[bench]'); torch (pip install torch)"``: the
    packages the skipped runs lacked, grouped by install command, in the runs' order; a
    record without those fields (written before they existed) gives its error's first
    line."""
    by_command: dict[str, list[str]] = {}
    other_reasons: dict[str, None] = {}
    for record in skipped:
        package, command = record.get("missing_package"), record.get("install_command")
        if package is None or command is None:
            other_reasons[_reason(record)] = None
            continue
        packages = by_command.setdefault(command, [])
        if package not in packages:
            packages.append(package)
    reasons = [f"{', '.join(packages)} ({command})" for command, packages in by_command.items()]
    return "; ".join([*reasons, *other_reasons])
