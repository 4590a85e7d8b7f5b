"""In-memory storage: the default, gone with the process."""

from __future__ import annotations

import copy
from typing import Any

from ensembo.trials import Trial, private_copy


class MemoryStorage:
    def __init__(self) -> None:
        self._meta: dict[str, Any] | None = None
        self._trials: dict[int, Trial] = {}

    def read_meta(self) -> dict[str, Any] | None:
        return copy.deepcopy(self._meta)

    def write_meta(self, meta: dict[str, Any]) -> None:
        self._meta = copy.deepcopy(meta)

    def put_trial(self, trial: Trial) -> None:
        """Keep a private copy: the trial given is the one ``ask`` hands out, whose
        config its caller may change."""
        self._trials[trial.number] = private_copy(trial)

    def trials(self) -> list[Trial]:
        """Copies, as a file reads its trials fresh: a study loading this storage keeps
        the trials it is given, and a change to their configs must not reach these."""
        return [private_copy(self._trials[n]) for n in sorted(self._trials)]
