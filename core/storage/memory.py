"""In-memory storage: the default, gone with the process."""

from __future__ import annotations

import copy
from typing import Any

from ensembo.trials import Trial


class MemoryStorage:
    def __init__(self) -> None:
        self._meta: dict[str, Any] | None = None
        self._trials: dict[int, Trial] = {}

    def read_meta(self) -> dict[str, Any] | None:
        return copy.deepcopy(self._meta)

    def write_meta(self, meta: dict[str, Any]) -> None:
        self._meta = copy.deepcopy(meta)

    def put_trial(self, trial: Trial) -> None:
        self._trials[trial.number] = trial

    def trials(self) -> list[Trial]:
        return [self._trials[n] for n in sorted(self._trials)]
