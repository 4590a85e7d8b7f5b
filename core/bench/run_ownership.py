"""Whose a benchmark run is: this invocation's to run, or another's sharing ``--out``.

Every suite (the optimizer suites' runner, the standalone suites' runs) decides here,
under the run's claim (:mod:`ensembo.bench.run_claims`), whether a run is held or
finished by another invocation, whether a record is a result this invocation's own
worker wrote, and whether a ``running`` marker is left by a run no process runs: decided
in one place, the suites cannot drift apart on what counts as another invocation's run.
"""

from __future__ import annotations

import os
import platform
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs

from ensembo.bench.record_stamps import RecordStamp, another_invocations_result
from ensembo.bench.run_claims import Claim, claim


@attrs.frozen(kw_only=True)
class Outcome:
    """What a worker did with one run. ``ran_here`` is false when another invocation
    sharing the output directory had finished the run or was running it: ``record`` is
    then theirs, and this invocation must not count the run as one it executed."""

    record: dict[str, Any]
    ran_here: bool


def elsewhere(
    spec: Any,
    existing: dict[str, Any] | None,
    taken: Claim,
    seen: RecordStamp | None,
    final: Callable[[dict[str, Any] | None], bool],
    of_this_size: Callable[[dict[str, Any]], bool],
) -> Outcome | None:
    """The outcome of a run another invocation holds or finished, None if it is ours.

    ``spec`` is any run with a ``path``; each suite passes its ``final`` (for the
    optimizer suites any complete record, which is never replaced; for the standalone
    suites one of this size) and ``of_this_size`` (a record of another size written
    since ``seen`` is no result of this run: the run at this size is still to be run;
    taking any record, the optimizer suites left it so though nobody ran it)."""
    if not taken.held:
        return Outcome(record=existing or _claimed_elsewhere(spec), ran_here=False)
    if _left_to_others(spec, existing, taken.locked, seen, final, of_this_size):
        return Outcome(record=existing, ran_here=False)
    return None


def _left_to_others(spec, existing, locked: bool, seen: RecordStamp | None, final,
                    of_this_size) -> bool:
    """Under a held claim: another invocation finished the run, or wrote its result
    (of this size) since ``seen``, or (where the claim is no lock) a live process is
    running it."""
    return (
        final(existing)
        or (another_invocations_result(Path(spec.path), existing, seen)
            and of_this_size(existing))
        or (not locked and running_elsewhere(existing))
    )


def _claimed_elsewhere(spec: Any) -> dict[str, Any]:
    fields = attrs.asdict(spec) if attrs.has(type(spec)) else {"path": str(spec.path)}
    return {**fields, "status": "running"}


def written_by(record: dict[str, Any] | None, seen: RecordStamp | None) -> bool:
    """Whether ``record`` is a result a worker of the invocation that took ``seen`` wrote."""
    return (record is not None and seen is not None and seen.invocation is not None
            and record.get("status") != "running"
            and record.get("invocation") == seen.invocation)


def stale_marker(run: Any, record: dict[str, Any]) -> bool:
    """Whether a ``running`` marker of this host is left by a run that no process runs:
    its claim is free (where claims are locks; a pid, which may be reused by another
    process since, is the test only where they are not)."""
    if record.get("host") != platform.node():
        return False
    with claim(Path(run.path)) as taken:
        if taken.locked:
            return taken.held
    return not running_elsewhere(record)


def running_elsewhere(record: dict[str, Any] | None) -> bool:
    if not record or record.get("status") != "running" or record.get("host") != platform.node():
        return False
    try:
        os.kill(int(record["pid"]), 0)
    except (OSError, KeyError, ValueError):
        return False  # that process is gone: the marker is stale
    return True
