"""Running named conformance checks: every failure is kept, and reported together."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ensembo import components
from ensembo.errors import DuplicatePluginError, PluginContractError, UnknownComponentError
from ensembo.plugin_checks import check_protocol
from ensembo.registry import Registry


class ConformanceError(PluginContractError):
    """A component broke its contract in use; ``failures`` holds (check, what happened)."""

    def __init__(self, component: str, failures: list[tuple[str, str]]):
        self.component, self.failures = component, failures
        listing = "\n".join(f"- {check}: {problem}" for check, problem in failures)
        super().__init__(f"{component} failed {len(failures)} conformance check(s):\n{listing}")


class ConformanceNote(UserWarning):
    """Not a broken contract, but a limit the author should know of (a loss that can
    score single models but not combinations of them). The CLI prints these as notes."""


class CheckRun:
    """Runs named checks, keeping every failure instead of stopping at the first."""

    def __init__(self, kind: str, spec: Any, registry: Registry | None):
        self.kind, self.spec, self.registry = kind, spec, registry
        self.passed: list[str] = []
        self.failures: list[tuple[str, str]] = []

    def first(self, protocol: Any, lacking: str) -> Any:
        """A fresh component, or ``None`` with a failed "protocol" check if it lacks
        ``protocol`` (a class or a tuple of them). A registered name is checked against
        its protocol when it is built, and that error is this check's finding: raised,
        it skipped the report (``--json`` printed plain text and exited 2). So is any
        error of the factory itself, including a registered one refusing the options
        (none given to a required one), as a failed "build" check: raised, ``--check``
        printed "this looks like a bug" and no report at all. Only a name that is not
        registered, or a spec that is neither a name nor a factory, is the caller's."""
        try:
            component = self.fresh()
        except PluginContractError as error:
            check = "protocol" if _raised_by_protocol_check(error) else "build"
            self.failures.append((check, f"{type(error).__name__}: {error}"))
            return None
        except (UnknownComponentError, DuplicatePluginError):  # no one component to check
            raise
        except Exception as error:  # the factory could not build: every check depends on it
            if not self._spec_names_a_component():
                raise
            notes = "".join(f" ({note})" for note in getattr(error, "__notes__", ()))
            self.failures.append(("build", f"{type(error).__name__}: {error}{notes}"))
            return None
        with self.check("protocol"):
            require(isinstance(component, protocol), lacking)
        return None if self.failures else component

    def _spec_names_a_component(self) -> bool:
        """Whether an error of :meth:`fresh` came from building the component, not from a
        ``spec`` that names none (a malformed mapping, or an object that is no factory)."""
        if isinstance(self.spec, str | Mapping):
            try:
                components.split_spec(self.kind, self.spec)
            except Exception:
                return False
            return True
        return callable(self.spec)

    def fresh(self) -> Any:
        if isinstance(self.spec, str | Mapping):
            return components.build(self.kind, self.spec, self.registry)
        if not callable(self.spec):
            raise TypeError(
                f"give a registered name, a spec or a zero-argument factory, not {self.spec!r}"
            )
        return self.spec()

    @contextmanager
    def check(self, name: str) -> Iterator[None]:
        try:
            yield
        except Exception as error:  # the component's failure is the finding
            self.failures.append((name, f"{type(error).__name__}: {error}"))
        else:
            self.passed.append(name)

    def done(self) -> list[str]:
        if self.failures:
            spec = components.split_spec(self.kind, self.spec)
            label = repr(spec[0]) if spec else getattr(self.spec, "__qualname__", repr(self.spec))
            raise ConformanceError(f"{self.kind.replace('_', ' ')} {label}", self.failures)
        return self.passed


def _raised_by_protocol_check(error: PluginContractError) -> bool:
    """Whether the error is the protocol check's finding about the object built, not
    the factory failing to build one: a registered factory refusing the options (a
    required one missing, a ``functools.partial`` with a misspelt one) or raising the
    error itself (a backend it needs is missing) fails "build", as docs §7 says. Told
    by where the innermost error was raised (``components.build`` re-raises the check's
    error naming the kind's key, from it)."""
    while isinstance(error.__cause__, PluginContractError):
        error = error.__cause__
    if error.__cause__ is not None or error.__traceback__ is None:
        return False
    frame = error.__traceback__
    while frame.tb_next is not None:
        frame = frame.tb_next
    return frame.tb_frame.f_code is check_protocol.__code__


def require(condition: bool, message: str) -> None:
    if not condition:
        raise AssertionError(message)
