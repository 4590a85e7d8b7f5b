"""Whether a run's record was written after this invocation planned the run.

The claim keeps two invocations sharing an ``--out`` from running one run at once, but
not from running it one after the other: when both plan a run and the first runs it and
writes a record that is not final (failed, skipped), the second, claiming it next, ran
it again. A record written since the second planned the run is the first's result of
the same round; it is left as it is (the next invocation retries it). The record file is
compared by identity (inode, size, modification time), not by clock, so the clocks of
an NFS server and its clients need not agree.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import attrs


@attrs.frozen
class RecordStamp:
    """What a record file was: ``(inode, size, mtime_ns)``, or None when there was none.
    Records are replaced whole (``os.replace``), so a rewrite changes the inode.
    ``invocation``: the token of the invocation that took the stamp, which its workers
    write into their records, so that a record of its own (written by a worker whose
    result was lost when a sibling worker died) is not taken for another's."""

    identity: tuple[int, int, int] | None
    invocation: str | None = None


def stamps(runs: Iterable[Any], invocation: str | None = None) -> dict[str, RecordStamp]:
    """Each run's record file as it is now, by the run's ``path``: taken before deciding
    which runs to run, so that a result written since is known for another's."""
    return {run.path: stamp(Path(run.path), invocation) for run in runs}


@attrs.frozen
class Pending:
    """The runs an invocation decided to run, and ``seen``: every planned run's record
    file as it was before that decision (by path, naming a fresh invocation token)."""

    runs: list[Any]
    seen: dict[str, RecordStamp]


def pending_runs(runs: Sequence[Any], finished: Callable[[Any], bool]) -> Pending:
    """The runs ``finished`` says are not, with the stamps taken first: stamped after
    deciding, a record another invocation wrote in between (a failed run) looked older
    than the decision, and the run was run again. Every suite decides here."""
    seen = stamps(runs, uuid.uuid4().hex)
    return Pending(runs=[run for run in runs if not finished(run)], seen=seen)


def stamp(path: Path, invocation: str | None = None) -> RecordStamp:
    try:
        status = os.stat(path)
    except OSError:
        return RecordStamp(None, invocation)
    return RecordStamp((status.st_ino, status.st_size, status.st_mtime_ns), invocation)


def another_invocations_result(
    path: Path, record: dict[str, Any] | None, seen: RecordStamp | None
) -> bool:
    """``record``, read under the run's claim, is a result another invocation wrote
    after this one saw ``seen`` (None: not known, so no): a record that is not a
    ``running`` marker (whose process, the claim being free, is gone), in a file that
    changed since, and not written by this invocation."""
    return (
        seen is not None
        and record is not None
        and record.get("status") != "running"
        and stamp(path).identity != seen.identity
        and (seen.invocation is None or record.get("invocation") != seen.invocation)
    )
