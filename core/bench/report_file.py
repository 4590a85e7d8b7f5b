"""Write a file the bench makes in ``--out`` (a suite's ``report.md``) whole or not at all.

Written in place, a report stopped mid-write (Ctrl-C, SIGTERM, a full disk) was left cut
short, and a reader of a shared ``--out`` could read half of it. The text is written into
a staging folder beside it and moved over the old file with ``os.replace``
(:mod:`ensembo.report.staged_folder`, as ``ensembo report`` writes its reports), so the
file is the old one or the new one; its mode, and a symbolic link to it, are kept.
"""

from __future__ import annotations

from pathlib import Path

from ensembo.report.staged_folder import staged


def write_report(path: Path, text: str) -> Path:
    """Replace ``path`` with ``text`` atomically (its folder is made if missing)."""
    path = Path(path)
    with staged(path.parent) as stage:
        (stage / path.name).write_text(text, encoding="utf-8")
    return path
