"""What a benchmark record was made on, and the report's lines that say so.

:mod:`ensembo.environment` records Python, package versions and BLAS kernels; a
benchmark record adds the platform, the CPU count (overheads depend on what shared the
cores) and the ensembo commit, since an editable install keeps one version string over
many commits. Archives made before records kept this still read: their records are
counted as "not recorded".
"""

from __future__ import annotations

import functools
import os
import platform
import subprocess
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def system_description() -> dict[str, Any]:
    """JSON-ready facts about this process's machine and code, for a run record."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "ensembo_commit": ensembo_commit(),
    }


@functools.cache
def ensembo_commit() -> str | None:
    """The commit ensembo is imported from, ``+dirty`` with uncommitted changes; None for an
    installed wheel or without git. Reads only (no index refresh, no lock taken)."""
    source = Path(__file__).resolve().parent
    if "site-packages" in source.parts:
        return None
    commit = _git(source, "rev-parse", "--short=12", "HEAD")
    if commit is None:
        return None
    changes = _git(source, "status", "--porcelain", "--untracked-files=no")
    return commit + ("+dirty" if changes else "")


def _git(directory: Path, *arguments: str) -> str | None:
    try:
        result = subprocess.run(
            ["git", "--no-optional-locks", "-C", str(directory), *arguments],
            capture_output=True, text=True, timeout=20, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return result.stdout.strip() if result.returncode == 0 else None


def system_summary(system: dict[str, Any]) -> str:
    """``Python 3.11.7, Linux-6.1-x86_64, 2 CPUs, ensembo 9b98088ab1c2``."""
    commit = system.get("ensembo_commit") or "commit unknown"
    return (
        f"Python {system.get('python', '?')}, {system.get('platform', '?')}, "
        f"{system.get('cpus', '?')} CPUs, ensembo {commit}"
    )


def environment_lines(descriptions: Iterable[str | None]) -> list[str]:
    """A report's environment list: each distinct description of the records with how
    many records it covers (None: a record from before records kept one)."""
    counts = Counter(descriptions)
    lines = []
    for description, count in sorted(counts.items(), key=lambda item: -item[1]):
        said = description or "not recorded (made before records kept it)"
        lines.append(f"- {said}: {count} record{'' if count == 1 else 's'}")
    return lines
