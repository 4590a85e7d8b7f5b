"""Several functions that each ask for the scores of single points, answered in
batches: :class:`Lockstep` lets ``lbfgs`` run one scipy L-BFGS-B per start (each with
its own state, scale and stopping) while the surrogate scores all their next points in
one call per round.
"""

from __future__ import annotations

import contextvars
import queue
import threading
from collections.abc import Callable
from typing import Any

import numpy as np


class _Stopped(Exception):
    """Raised in a run's thread to end it when another run or the scoring failed."""


_STOP = object()
"""The answer that makes a run raise :class:`_Stopped`."""


class Lockstep:
    """Runs several functions, each in a thread of its own, that ask for scores of
    single points, and answers them in batches.

    A round waits until every run still going has asked for its next point, scores
    those points with one call of ``score`` (rows in run order, in the caller's
    thread), and hands each run its row. The runs share nothing else, so each ends
    exactly as it would alone, up to the rounding of the batched call. The threads are
    a way to suspend a scipy run between two of its calls (scipy has no other), not to
    compute in parallel: the scoring runs while every run waits for it. Runs and
    caller talk through queues only, so that a message wakes just the one it is for.
    """

    def __init__(self, score: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]):
        self._score = score

    def run(self, runs: list[Callable[[Callable], Any]]) -> list[Any]:
        """Each ``run(evaluate)``'s result, in order; the first error is raised."""
        requests: queue.SimpleQueue = queue.SimpleQueue()  # (key, vector or end)
        answers = [queue.SimpleQueue() for _ in runs]
        results: list[Any] = [None] * len(runs)
        threads = [  # in a copy of the caller's context each: numpy's errstate lives there
            threading.Thread(
                target=contextvars.copy_context().run,
                args=(_run_thread, run, key, requests, answers[key], results),
                daemon=True,
            )
            for key, run in enumerate(runs)
        ]
        waiting: dict[int, np.ndarray] = {}
        running, failure = len(runs), None
        try:
            for thread in threads:
                thread.start()
            while running:
                key, message = requests.get()
                if isinstance(message, np.ndarray):
                    waiting[key] = message
                else:  # the run ended: None, or the error it raised
                    running -= 1
                    failure = failure or message
                if waiting and len(waiting) == running:
                    self._answer(waiting, answers, stop=failure is not None)
                    waiting = {}
        except BaseException:  # the scoring failed, or ^C: no run may be left waiting
            _stop_all(answers)
            raise
        finally:
            for thread in threads:
                if thread.ident is not None:  # started
                    thread.join()
        if failure is not None:
            raise failure
        return results

    def _answer(self, waiting: dict[int, np.ndarray], answers: list, stop: bool) -> None:
        keys = sorted(waiting)
        if stop:
            replies = [_STOP] * len(keys)
        else:
            values, gradients = self._score(np.stack([waiting[key] for key in keys]))
            replies = list(zip(values, gradients, strict=True))
        for key, reply in zip(keys, replies, strict=True):
            answers[key].put(reply)


def _run_thread(
    run: Callable,
    key: int,
    requests: queue.SimpleQueue,
    answers: queue.SimpleQueue,
    results: list[Any],
) -> None:
    """``run`` with an ``evaluate`` that asks the caller; its end is the last message."""

    def evaluate(vector: np.ndarray) -> tuple[float, np.ndarray]:
        requests.put((key, vector))
        answer = answers.get()
        if answer is _STOP:
            raise _Stopped
        return answer

    ended: BaseException | None = None
    try:
        results[key] = run(evaluate)
    except _Stopped:
        pass
    except BaseException as error:  # handed to the caller's thread
        ended = error
    finally:
        requests.put((key, ended))


def _stop_all(answers: list) -> None:
    """Make every run stop at its next ask, or at the one it is waiting on.

    Not from ``waiting`` and ``running``: a Ctrl-C that lands between taking a message
    off the queue and recording it loses the message, and a stop that trusted the
    counts then waited for ever for a run that was itself waiting (about 1 Ctrl-C in
    20 during a GP proposal hung ``optimize``). A :data:`_STOP` for every run is never
    wrong: a run that has ended never reads it, and one with an answer still to read
    stops at its next ask."""
    for answer in answers:
        answer.put(_STOP)
