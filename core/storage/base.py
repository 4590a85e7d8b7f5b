"""The storage contract.

A storage holds the study's metadata (a JSON object written once, at creation) and its
trials. ``put_trial`` is atomic: after it returns, the trial survives a crash of the
process. Returned trials are values and are never mutated by the storage.

A storage may also have ``put_trials(trials)``, which writes several trials in one
atomic step. A batch ``ask`` uses it, so that a crash keeps all of its trials or none
and a resumed run proposes the same batch again; without it the trials are written one
by one, and a batch cut short resumes with another path.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from ensembo.trials import Trial


@runtime_checkable
class Storage(Protocol):
    def read_meta(self) -> dict[str, Any] | None:
        """The study metadata, or ``None`` for an empty storage."""

    def write_meta(self, meta: dict[str, Any]) -> None:
        """Record the study metadata (space, components, seed...)."""

    def put_trial(self, trial: Trial) -> None:
        """Insert or replace the trial with ``trial.number``, atomically."""

    def trials(self) -> list[Trial]:
        """All trials, ordered by number."""
