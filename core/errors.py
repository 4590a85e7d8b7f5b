"""Exception hierarchy.

Every error roots in :class:`EnsemboError` and also subclasses the builtin a caller
would naturally catch, so ``except ValueError`` keeps working around bad input.
Messages say where the problem is, what was found, and what is valid.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence


class EnsemboError(Exception):
    """Root of every error raised by ensembo.

    Pickled as its message and attributes, without calling ``__init__`` again: errors
    cross process boundaries (process pools, dask), and the default unpickling called
    ``__init__`` with the message alone, which fails for every error taking its fields.
    """

    def __reduce__(self) -> tuple:
        return _unpickled, (type(self), self.args), self.__dict__


def _unpickled(cls: type[EnsemboError], args: tuple) -> EnsemboError:
    """``cls`` with ``args`` but not its own ``__init__``; its attributes and notes come
    back as pickle's state. The builtin it also subclasses sets what it derives from the
    message (``ImportError.msg``)."""
    error = cls.__new__(cls, *args)
    builtin = next(base for base in cls.__mro__ if base.__module__ == "builtins")
    builtin.__init__(error, *args)
    return error


class SpaceError(EnsemboError, ValueError):
    """A search space definition is invalid; ``path`` names the offending key."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)


class ExperimentError(EnsemboError, ValueError):
    """An experiment file or its settings are invalid; ``path`` names the offending key."""

    def __init__(self, path: str, message: str):
        self.path = path
        self.message = message
        super().__init__(f"{path}: {message}" if path else message)


class UnknownComponentError(EnsemboError, LookupError):
    """A component name is not registered; the message suggests close matches.

    ``hint`` adds context after the listing, e.g. that some plugins failed to load (the
    name may belong to one of them).
    """

    def __init__(self, kind: str, name: str, available: Iterable[str], hint: str = ""):
        self.kind = kind
        self.name = name
        self.available = sorted(available)
        self.hint = hint
        close = close_names(name, self.available, n=1)
        suggestion = f"; did you mean {close[0]!r}?" if close else "."
        listing = ", ".join(self.available) or "(none registered)"
        extra = f"; {hint}" if hint else ""
        super().__init__(f"Unknown {kind} {name!r}{suggestion} Available: {listing}{extra}.")


def close_names(name: str, available: Sequence[str], n: int = 3) -> list[str]:
    """The available names ``name`` most likely misspells, best first.

    Compared ignoring case (``GP`` is ``gp``: difflib alone found nothing that short),
    and a name of several words also matches its initials (``random-forest``,
    ``RandomForest`` -> ``rf``), as ensembo's short names are made.
    """
    by_folded: dict[str, str] = {}
    for candidate in available:
        by_folded.setdefault(str(candidate).casefold(), candidate)
    folded = str(name).casefold()
    exact = [c for c in (folded, _initials(str(name))) if c in by_folded]
    found = exact + difflib.get_close_matches(folded, list(by_folded), n=n)
    return [by_folded[c] for c in dict.fromkeys(found)][:n]


def _initials(name: str) -> str:
    """``random-forest`` and ``RandomForest`` -> ``rf``; ``''`` for a one-word name."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", name)
    return "".join(word[0] for word in words).casefold() if len(words) > 1 else ""


class DuplicatePluginError(EnsemboError, ValueError):
    """Two or more distributions register the same component name for the same kind;
    ``distributions`` names every one of them."""

    def __init__(self, kind: str, name: str, first: str, second: str, *others: str):
        self.kind, self.name, self.first, self.second = kind, name, first, second
        self.distributions = (first, second, *others)
        if not others:
            message = (f"{kind} {name!r} is registered twice: by distribution {first!r} "
                       f"and by distribution {second!r}. Uninstall one or block it with "
                       "ENSEMBO_BLOCK_PLUGINS.")
        else:  # naming only two left the name ambiguous once one of them was removed
            named = [repr(d) for d in self.distributions]
            message = (f"{kind} {name!r} is registered {len(named)} times: by distributions "
                       f"{', '.join(named[:-1])} and {named[-1]}. Uninstall all but one or "
                       "block the others with ENSEMBO_BLOCK_PLUGINS.")
        super().__init__(message)


class PluginContractError(EnsemboError, TypeError):
    """A plugin factory produced an object that does not satisfy its protocol."""


class ComponentOptionError(EnsemboError, ValueError):
    """A registered component refused the value of one of its options."""


class TrialError(EnsemboError, RuntimeError):
    """A trial was used in a way its state does not allow (e.g. told twice)."""


class StorageError(EnsemboError, RuntimeError):
    """A storage file is unreadable or belongs to a different study."""


class MissingDependencyError(EnsemboError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    def __init__(self, feature: str, module: str, extra: str):
        self.feature, self.module, self.extra = feature, module, extra
        super().__init__(
            f"{feature} needs the {module!r} package, which is not installed. "
            f"Install it with: pip install 'ensembo[{extra}]'"
        )


class ExecutionError(EnsemboError, RuntimeError):
    """Trials cannot be evaluated as asked (bad execution settings, unusable backend)."""
