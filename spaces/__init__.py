"""Search spaces: the tree DSL, ConfigSpace interop, imputation, encoding for
surrogates, executable spaces (config -> scikit-learn estimator) and the built-in library.

See docs/spaces.md for the DSL reference.
"""

from __future__ import annotations

from ensembo.errors import SpaceError
from ensembo.spaces.encoding import EncodedBatch
from ensembo.spaces.load import load, problems_in
from ensembo.spaces.problems import SpaceDefinitionError
from ensembo.spaces.space import Space

__all__ = ["EncodedBatch", "Space", "SpaceDefinitionError", "SpaceError", "load", "problems_in"]
