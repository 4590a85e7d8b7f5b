"""Search spaces: declaration, ConfigSpace interop, encoding for surrogates."""

from __future__ import annotations

from typing import Any

from ConfigSpace import ConfigurationSpace

from ensembo.errors import SpaceError
from ensembo.spaces.encoding import EncodedBatch
from ensembo.spaces.space import Space


def load(source: Any) -> Space:
    """Return a :class:`Space` from a Space, a ConfigSpace ``ConfigurationSpace`` or the
    output of :meth:`Space.definition`."""
    if isinstance(source, Space):
        return source
    if isinstance(source, ConfigurationSpace):
        return Space.from_configspace(source)
    if isinstance(source, dict) and "configspace" in source:
        return Space.from_definition(source)
    raise SpaceError("", f"cannot load a search space from {type(source).__name__}: {source!r}")


__all__ = ["EncodedBatch", "Space", "SpaceError", "load"]
