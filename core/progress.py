"""A progress bar for long optimizations, drawn on stderr, that logging does not tear.

:class:`ProgressBar` is a lifecycle-hook observer: registered with a study's plugin
manager it counts finished trials and shows the best loss so far and the ensemble's
loss, so the optimization loop does not know it exists. It draws only when its stream
is a terminal — piped or redirected output stays clean — and while it is up, log
records that would go to that terminal are written through ``tqdm.write`` above the bar.
"""

from __future__ import annotations

import logging
import sys
from typing import IO, TYPE_CHECKING

import tqdm

from ensembo.hookspecs import hookimpl
from ensembo.report.scoring import ensemble_loss
from ensembo.trials import TrialState

if TYPE_CHECKING:
    from ensembo.ensemble import Ensemble
    from ensembo.study import Study
    from ensembo.trials import Trial


def is_terminal(stream: IO[str]) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def in_notebook() -> bool:
    """A Jupyter kernel: stderr is not a terminal there, yet it shows a bar well."""
    return "ipykernel" in sys.modules


class TqdmLoggingHandler(logging.Handler):
    """Writes records with ``tqdm.write`` so they appear above an active bar."""

    def __init__(self, stream: IO[str], level: int = logging.NOTSET):
        super().__init__(level)
        self.stream = stream

    def emit(self, record: logging.LogRecord) -> None:
        try:
            tqdm.tqdm.write(self.format(record), file=self.stream)
        except Exception:  # logging must never take the run down
            self.handleError(record)


class _LoggingDetour:
    """Swaps the root logger's handlers that write to ``stream`` for tqdm-aware ones."""

    def __init__(self, stream: IO[str]):
        self.stream = stream
        self._swapped: list[tuple[logging.Handler, logging.Handler]] = []

    def __enter__(self) -> _LoggingDetour:
        root = logging.getLogger()
        for handler in list(root.handlers):
            if isinstance(handler, logging.StreamHandler) and handler.stream is self.stream:
                replacement = TqdmLoggingHandler(self.stream, handler.level)
                replacement.setFormatter(handler.formatter)
                for log_filter in handler.filters:
                    replacement.addFilter(log_filter)
                root.removeHandler(handler)
                root.addHandler(replacement)
                self._swapped.append((handler, replacement))
        return self

    def __exit__(self, *exc_info) -> None:
        root = logging.getLogger()
        for original, replacement in self._swapped:
            root.removeHandler(replacement)
            root.addHandler(original)
        self._swapped.clear()


class ProgressBar:
    """Trial count, best loss so far and ensemble loss of a running study.

    ``total`` is the number of trials planned (``None`` when only a timeout bounds the
    run); ``initial`` counts the trials finished before this run toward it, so that a
    continued study's bar ends at its budget. ``enabled=None`` draws the bar only if
    ``stream`` (default stderr) is a terminal or a Jupyter notebook's stderr; ``False``
    never draws it. The bar closes when the study finishes.
    """

    def __init__(
        self,
        total: int | None,
        *,
        initial: int = 0,
        stream: IO[str] | None = None,
        enabled: bool | None = None,
        description: str = "trials",
    ):
        self.stream = sys.stderr if stream is None else stream
        if enabled is None:
            enabled = is_terminal(self.stream) or (self.stream is sys.stderr and in_notebook())
        self.enabled = bool(enabled)
        self.best: float | None = None
        self.ensemble_loss: float | None = None
        self.ensemble_size: int | None = None
        self.failed = 0
        self._bar: tqdm.tqdm | None = None
        self._detour: _LoggingDetour | None = None
        if self.enabled:
            self._detour = _LoggingDetour(self.stream).__enter__()
            self._bar = tqdm.tqdm(
                total=total,
                initial=initial,
                desc=description,
                unit="trial",
                file=self.stream,
                dynamic_ncols=True,
                leave=True,
            )

    @property
    def drawing(self) -> bool:
        return self._bar is not None

    def postfix(self) -> dict[str, str]:
        """What follows the counter, e.g. ``best=0.12, ensemble=0.10 (3 members), failed=1``."""
        shown = {}
        if self.best is not None:
            shown["best"] = f"{self.best:.4g}"
        if self.ensemble_loss is not None:
            size = "" if self.ensemble_size in (None, 1) else f" ({self.ensemble_size} members)"
            shown["ensemble"] = f"{self.ensemble_loss:.4g}{size}"
        if self.failed:
            shown["failed"] = str(self.failed)
        return shown

    @hookimpl
    def ensembo_trial_finished(self, study: Study, trial: Trial) -> None:
        if not trial.state.finished:  # interrupted: it will be run again
            return
        best = study.best_trial
        self.best = None if best is None else best.loss
        self.failed += trial.state is TrialState.FAILED
        if self._bar is not None:
            self._bar.set_postfix(self.postfix(), refresh=False)
            self._bar.update(1)

    @hookimpl
    def ensembo_ensemble_updated(self, study: Study, ensemble: Ensemble) -> None:
        if self._bar is None:  # scoring the ensemble costs a pass over every prediction
            return
        self.ensemble_size = len(ensemble)
        self.ensemble_loss = ensemble_loss(study.history, ensemble, study.context)

    @hookimpl
    def ensembo_study_finished(self, study: Study) -> None:
        self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.set_postfix(self.postfix(), refresh=False)
            self._bar.close()
            self._bar = None
        if self._detour is not None:
            self._detour.__exit__(None, None, None)
            self._detour = None
