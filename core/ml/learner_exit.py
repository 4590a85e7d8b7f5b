"""A learner that calls ``sys.exit()`` fails its trial; it does not end the data run.

Learners that wrap a program or a command-line library may exit on an option they
refuse (argparse, click). An objective's ``sys.exit()`` already fails its trial
(:class:`~ensembo.execution.ObjectiveExit`), but a data run calls the learners itself:
in-process the SystemExit went through the loop and ended the whole run, and in a child
process the trial said "the objective called sys.exit", naming no learner. Only the
learner's own calls are caught: a SystemExit from ensembo's code, or from a signal
handler of the program (a service's ``sys.exit`` on SIGTERM), still ends the run.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from ensembo.errors import ExecutionError
from ensembo.execution.outcome import ObjectiveExit, describe_exception
from ensembo.interrupts import raised_by_signal_handler


class LearnerExit(ObjectiveExit):
    """A learner called ``sys.exit()`` in its ``fit`` or ``predict``: a failure of its
    trial, named after the estimator that called it (a Pipeline's step, not the
    Pipeline). An :class:`ObjectiveExit`, so ``catch`` treats it as one."""

    def __init__(self, learner: str, method: str, code: Any = None):
        ExecutionError.__init__(self, learner, method, code)  # args: so it pickles back
        self.learner, self.method, self.code = learner, method, code

    def __str__(self) -> str:
        if self.code is None:
            call, exit_said = "sys.exit()", "SystemExit"
        else:
            call, exit_said = f"sys.exit({self.code!r})", describe_exception(SystemExit(self.code))
        return f"the learner {self.learner} called {call} in its {self.method} ({exit_said})"


@contextlib.contextmanager
def exit_fails_the_trial(model: Any, method: str) -> Iterator[None]:
    """Raise :class:`LearnerExit` for a ``sys.exit()`` that ``model``'s ``method`` (fit,
    predict) calls inside the block."""
    try:
        yield
    except SystemExit as sys_exit:
        if raised_by_signal_handler(sys_exit):  # the program stopping, not the learner
            raise
        raise LearnerExit(_exiting_learner(model, sys_exit), method, sys_exit.code) from sys_exit


def _exiting_learner(model: Any, sys_exit: SystemExit) -> str:
    """The class name of the innermost estimator (an object with ``fit`` and
    ``get_params``) whose method the exit went through: in a Pipeline, the step that
    called it; ``model``'s own when no frame has one."""
    name = type(model).__name__
    frames = sys_exit.__traceback__
    while frames is not None:
        owner = frames.tb_frame.f_locals.get("self")
        if hasattr(owner, "fit") and hasattr(owner, "get_params"):
            name = type(owner).__name__
        frames = frames.tb_next
    return name
