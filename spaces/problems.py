"""Collecting every problem of a space definition before reporting them together."""

from __future__ import annotations

import difflib

from ensembo.errors import SpaceError


class SpaceDefinitionError(SpaceError):
    """One or more problems in a space definition; ``problems`` lists them all."""

    def __init__(self, problems: list[SpaceError]):
        self.problems = list(problems)
        first = self.problems[0]
        more = len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        super().__init__(first.path, first.message + suffix)

    def __str__(self) -> str:
        return "\n".join(str(problem) for problem in self.problems)


def unknown_keys(raw, valid: tuple[str, ...], path: str, problems: Problems) -> None:
    """Add a problem for every key of ``raw`` that is not in ``valid``, with the valid key
    it may be a typo of."""
    for key in raw:
        if key not in valid:
            where = f"{path}.{key}" if path else str(key)
            listed = ", ".join(valid)
            close = difflib.get_close_matches(str(key), valid, n=1, cutoff=0.75)
            if close:
                message = f"did you mean {close[0]!r}? Valid keys: {listed}"
            else:
                message = f"valid keys: {listed}"
            problems.add(where, f"unknown key {key!r}; {message}")


class Problems:
    """A list of problems found in the document read from ``source``."""

    def __init__(self, source: str = ""):
        self.source = source
        self.items: list[SpaceError] = []

    def add(self, path: str, message: str) -> None:
        where = f"{self.source}: {path}" if self.source and path else (self.source or path)
        self.items.append(SpaceError(where, message))

    def __bool__(self) -> bool:
        return bool(self.items)

    def raise_if_any(self) -> None:
        if self.items:
            raise SpaceDefinitionError(self.items)
