"""The :class:`Space`: one search space, whatever it was declared in.

A Space wraps a ConfigSpace ``ConfigurationSpace`` (which does sampling, validity
checks and neighbourhoods) and adds what ensembo needs on top: imputation rules and an
encoder for surrogates, quantization, plain-dict configurations holding only active
values, and — for spaces declared in the DSL with estimators — ``build(config)``.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from ConfigSpace import Configuration, ConfigurationSpace
from ConfigSpace.util import deactivate_inactive_hyperparameters

from ensembo.errors import SpaceError
from ensembo.spaces import impute as imputation
from ensembo.spaces.activity import deactivate, in_activation_order
from ensembo.spaces.configspace_checks import checked_configspace
from ensembo.spaces.encoder import ENCODINGS, ColumnLayout
from ensembo.spaces.quantize import off_grid, quantize, step_of
from ensembo.spaces.sampling import CANDIDATES_PER_CONFIG, MAX_CANDIDATES, prior_vectors
from ensembo.spaces.spec import SpaceSpec
from ensembo.spaces.values import (
    configuration_error,
    illegal_value,
    plain,
    plain_data,
    stored_value,
    whole,
    wrong_kind_of_number,
)
from ensembo.spaces.vectors import VectorForms


class Space(VectorForms):
    """A search space over which ensembo optimizes.

    ``impute`` overrides, per hyperparameter name, the imputation rule stored in the
    hyperparameter's ``meta`` (a rule name of :data:`ensembo.spaces.impute.RULES` or
    ``{"value": x}``; default ``midpoint``). ``encoding`` is ``"index"`` (one column per
    hyperparameter) or ``"onehot"`` (one column per category of categorical ones).
    """

    def __init__(
        self,
        configspace: ConfigurationSpace,
        *,
        name: str | None = None,
        impute: Mapping[str, Any] | None = None,
        encoding: str = "index",
        spec: SpaceSpec | None = None,
        document: Mapping[str, Any] | None = None,
    ):
        self.name = name or configspace.name or "space"
        # checked, with every stepped default on its grid (a copy when one moved)
        self.configspace = configspace = checked_configspace(self.name, configspace)
        self.names: tuple[str, ...] = tuple(configspace.keys())
        self.spec = spec
        self.document = document
        self._hyperparameters = [configspace[n] for n in self.names]
        impute = dict(impute or {})
        unknown = sorted(set(impute) - set(self.names))
        if unknown:
            hints = "".join(f"; {h}" for name in unknown if (h := self._full_name_hint(name)))
            raise SpaceError(self.name, f"imputation given for unknown hyperparameters {unknown}"
                             f"{hints}")
        self._rules: dict[str, Any] = {}
        for hp in self._hyperparameters:
            try:
                rule = (
                    imputation.override_rule(hp, impute[hp.name])
                    if hp.name in impute
                    else imputation.rule_of(hp)
                )
                imputation.imputed_value(hp, rule)
            except ValueError as error:
                raise SpaceError(f"{self.name}: {hp.name}", str(error)) from None
            self._rules[hp.name] = rule
        if encoding not in ENCODINGS:
            raise SpaceError(
                self.name, f"unknown encoding {encoding!r}; valid: {', '.join(ENCODINGS)}"
            )
        self.encoding = encoding
        self.layout = ColumnLayout(self._hyperparameters, self._rules, onehot=encoding == "onehot")
        self._index_spread = np.array(
            [imputation.index_spread(hp) for hp in self._hyperparameters], dtype=float
        )

    # --- construction -----------------------------------------------------------------

    @classmethod
    def from_configspace(cls, configspace: ConfigurationSpace, **kwargs: Any) -> Space:
        return cls(configspace, **kwargs)

    @classmethod
    def from_document(
        cls, document: Mapping[str, Any], *, source: str = "", **kwargs: Any
    ) -> Space:
        """Parse, check and compile a DSL document (see docs/spaces.md)."""
        from ensembo.spaces.load import compile_document

        spec, configspace, normalized = compile_document(document, source)
        return cls(configspace, name=spec.name, spec=spec, document=normalized, **kwargs)

    def to_configspace(self) -> ConfigurationSpace:
        return self.configspace

    def definition(self) -> dict[str, Any]:
        """A JSON-serializable description that :func:`ensembo.spaces.load` turns back
        into an equal space; studies store it so they can be resumed."""
        definition = {
            "name": self.name,
            "configspace": plain_data(self.configspace.to_serialized_dict()),
            "impute": dict(self._rules),
            "encoding": self.encoding,
        }
        if self.configspace.meta:  # ConfigSpace's serialization drops it
            definition["meta"] = plain_data(self.configspace.meta)
        if self.document is not None:
            definition["document"] = self.document
        return definition

    @classmethod
    def from_definition(cls, definition: Mapping[str, Any]) -> Space:
        options = {
            "impute": definition.get("impute"),
            "encoding": definition.get("encoding", "index"),
        }
        if definition.get("document") is not None:
            # A document without a name took its source's (the file name): keep it.
            return cls.from_document(
                definition["document"], source=definition.get("name") or "", **options
            )
        configspace = ConfigurationSpace.from_serialized_dict(dict(definition["configspace"]))
        if definition.get("meta"):
            configspace.meta = dict(definition["meta"])
        return cls(configspace, name=definition.get("name"), **options)

    def with_encoding(self, encoding: str) -> Space:
        """The same space encoding categoricals as ``"index"`` or ``"onehot"``."""
        return self._evolve(encoding=encoding)

    def with_imputation(self, rule: Any, names: Sequence[str] | None = None) -> Space:
        """The same space with ``rule`` imputing ``names`` (default: every hyperparameter)."""
        chosen = self.names if names is None else names
        return self._evolve(impute={**self._rules, **{n: rule for n in chosen}})

    def _evolve(self, **changes: Any) -> Space:
        options = {
            "name": self.name,
            "impute": dict(self._rules),
            "encoding": self.encoding,
            "spec": self.spec,
            "document": self.document,
            **changes,
        }
        return Space(self.configspace, **options)

    # --- shape ------------------------------------------------------------------------

    @property
    def dimension(self) -> int:
        """Number of hyperparameters (= encoded columns with the index encoding)."""
        return len(self.names)

    @property
    def encoded_dimension(self) -> int:
        return self.layout.width

    @property
    def is_conditional(self) -> bool:
        return bool(self.configspace.conditions)

    @property
    def is_executable(self) -> bool:
        return self.spec is not None and self.spec.is_executable

    def hyperparameter(self, name: str):
        try:
            return self.configspace[name]
        except KeyError:
            raise SpaceError(self.name, f"no hyperparameter named {name!r}") from None

    def imputation_rule(self, name: str) -> Any:
        self.hyperparameter(name)
        return self._rules[name]

    # --- configurations ---------------------------------------------------------------

    def sample(self, n: int, seed: int | np.random.Generator | None = None) -> list[dict[str, Any]]:
        """``n`` valid configurations drawn from the space's prior distributions."""
        rng = np.random.default_rng(seed)
        if n <= 0:
            return []
        self.configspace.seed(int(rng.integers(2**31 - 1)))
        if self._quantized:
            from ensembo.spaces.grid_sampling import sample_on_grid

            return sample_on_grid(self, n, rng)
        return [self._to_dict(c) for c in self._draw(n)]

    def _draw(self, n: int) -> list[Configuration]:
        """``n`` configurations drawn as ConfigSpace draws them (see
        :func:`~ensembo.spaces.sampling.prior_vectors`), with activity recomputed where its
        sampler leaves a hyperparameter active whose condition reads a nested choice (see
        :func:`~ensembo.spaces.activity.deactivate`)."""
        vectors = prior_vectors(self.configspace, n)
        if vectors is None:
            raise self._forbidden_everywhere(n)
        if not in_activation_order(self.configspace._dag.minimum_conditions):
            vectors = deactivate(self.configspace, vectors)
        return [Configuration(self.configspace, vector=vector) for vector in vectors]

    def _forbidden_everywhere(self, n: int) -> SpaceError:
        """Why sampling gave up: the forbidden clauses reject (almost) every draw."""
        budget = MAX_CANDIDATES + CANDIDATES_PER_CONFIG * n
        clauses = "; ".join(map(str, self.configspace.forbidden_clauses)) or "none"
        return SpaceError(
            self.name,
            f"gave up drawing {n} configuration(s) after more than {budget} candidates: "
            f"the forbidden clauses reject (almost) all of them ({clauses}); "
            "loosen or remove one",
        )

    def default(self) -> dict[str, Any]:
        return self._to_dict(self.configspace.get_default_configuration())

    def configuration(self, config: Mapping[str, Any], *, snap: bool = True) -> Configuration:
        """Check ``config`` and return it as a ConfigSpace ``Configuration``; stepped values
        move to their grid (``snap=False`` refuses one off it, see :meth:`validate`)."""
        self._check_names(config)
        if not snap:
            self._check_on_grid(config)
        values = {k: whole(self.configspace[k], quantize(self.configspace[k], v))
                  for k, v in config.items()}
        for name, value in values.items():  # what ConfigSpace would let through
            problem = wrong_kind_of_number(self.configspace[name], value)
            if problem:
                raise SpaceError(f"{self.name}: {name}", problem)
        try:
            return Configuration(self.configspace, values=values)
        except Exception as error:  # ConfigSpace raises several types for bad values
            for name, value in values.items():
                problem = illegal_value(self.configspace[name], value)
                if problem:
                    raise SpaceError(f"{self.name}: {name}", problem) from error
            raise configuration_error(self.name, config, error) from error

    def _check_names(self, config: Any) -> None:
        if not isinstance(config, Mapping):
            raise SpaceError(self.name, "a configuration is a mapping of hyperparameter names "
                             f"to values, got {type(config).__name__}: {config!r:.100}")
        unknown = set(config) - set(self.names)
        if unknown:
            hints = [hint for name in sorted(unknown) if (hint := self._full_name_hint(name))]
            listed = "".join(f"; {hint}" for hint in hints)
            raise SpaceError(self.name, f"unknown hyperparameters {sorted(unknown)}{listed}")

    def _full_name_hint(self, name: str) -> str:
        """Names are flat (``classifier:svm:C``): a short name written as in the space
        file, or a typo, gets the full names it may mean."""
        full = [n for n in self.names if n.rsplit(":", 1)[-1] == str(name)]
        if not full:
            full = difflib.get_close_matches(str(name), self.names, n=1)
        return f"{name!r} may mean {', '.join(full)}" if full else ""

    def validate(self, config: Mapping[str, Any], *, snap: bool = True) -> dict[str, Any]:
        """Return ``config`` normalized to plain values, or raise :class:`SpaceError`.

        Stepped (``q``) values move to the nearest grid point, as proposers need; pass
        ``snap=False`` for a configuration a person gives, so that an off-grid value is
        refused instead of silently replaced by another one.
        """
        return self._to_dict(self.configuration(config, snap=snap))

    def _check_on_grid(self, config: Mapping[str, Any]) -> None:
        for name, value in config.items():
            problem = off_grid(self.configspace[name], value)
            if problem:
                raise SpaceError(f"{self.name}: {name}", problem)

    def complete(self, partial: Mapping[str, Any]) -> dict[str, Any]:
        """``partial`` with every active hyperparameter it leaves out at its default.

        For configurations a person writes (``Study.enqueue``): naming the values that
        matter is enough. A name the space lacks, a bad value, a stepped value off its
        grid, or a value for a hyperparameter that ``partial``'s own choices make inactive
        is a SpaceError.
        """
        self._check_names(partial)
        partial = {name: whole(self.configspace[name], value) for name, value in partial.items()}
        full = {hp.name: partial.get(hp.name, hp.default_value) for hp in self._hyperparameters}
        for name, value in partial.items():
            problem = illegal_value(self.configspace[name], value)
            if problem:
                raise SpaceError(f"{self.name}: {name}", problem)
        self._check_on_grid(partial)
        try:
            active = dict(deactivate_inactive_hyperparameters(full, self.configspace))
        except Exception as error:  # e.g. a forbidden combination
            raise configuration_error(self.name, partial, error) from error
        inactive = sorted(set(partial) - set(active))
        if inactive:
            raise SpaceError(
                self.name,
                f"{inactive} are not active in configuration {dict(partial)}: their "
                "conditions do not hold for the values given (or the defaults)",
            )
        return self.validate(active)

    def is_valid(self, config: Mapping[str, Any]) -> bool:
        try:
            self.configuration(config)
        except SpaceError:
            return False
        return True

    @property
    def _quantized(self) -> bool:
        return any(step_of(hp) is not None for hp in self._hyperparameters)

    def _snapped(self, config: Mapping[str, Any]) -> dict[str, Any] | None:
        """``config`` on the quantization grid, activity recomputed; None if now invalid."""
        return self._snapped_all([config])[0]

    def _snapped_all(self, configs: Sequence[Mapping[str, Any]]) -> list[dict[str, Any] | None]:
        """:meth:`_snapped` of many configurations at once: activity and forbidden clauses
        are checked on their vectors together (one ConfigSpace ``Configuration`` per
        config made sampling 10-100x slower in any space with a ``q``)."""
        full = [self._stored_on_grid(config) for config in configs]
        raw = deactivate(self.configspace, self.vectors(full))
        allowed = ~self._forbidden_rows(raw)
        return [
            _active(values, row) if ok else None
            for values, row, ok in zip(full, raw, allowed, strict=True)
        ]

    def _stored_on_grid(
        self, config: Mapping[str, Any], only_given: bool = False
    ) -> dict[str, Any]:
        """Every hyperparameter's value (its default where ``config`` has none, unless
        ``only_given``) on its grid and rounded as ConfigSpace stores floats, twice: as
        snapping, then validating, does, so that ``validate`` leaves the result as is."""
        values = {}
        for hp in self._hyperparameters:
            if hp.name in config or not only_given:
                value = config.get(hp.name, hp.default_value)
                values[hp.name] = plain(stored_value(hp, stored_value(hp, value)))
        return values

    def _forbidden_rows(self, raw: np.ndarray) -> np.ndarray:
        """Which ConfigSpace vectors (n, d) a forbidden clause rejects."""
        forbidden = np.zeros(len(raw), dtype=bool)
        if len(raw):
            for clause in self.configspace._dag.fast_forbidden_checks:
                forbidden |= clause.is_forbidden_vector_array(raw.T)
        return forbidden

    @staticmethod
    def _to_dict(configuration: Configuration) -> dict[str, Any]:
        return {k: plain(v) for k, v in dict(configuration).items()}

    # --- presentation and execution -----------------------------------------------------

    def show(self) -> str:
        """The tree as text: branches, ranges, scales, defaults, imputation."""
        from ensembo.spaces.show import render

        return render(self)

    def plan(self, config: Mapping[str, Any]):
        """What :meth:`build` would create for ``config``, as plain data."""
        from ensembo.spaces.plan import Planner

        if not self.is_executable:
            from ensembo.spaces.check_components import unbuilt_hint

            raise SpaceError(
                self.name,
                "this space builds no estimator; add 'estimator' or 'steps' to its document"
                + unbuilt_hint(self.spec),
            )
        return Planner(self.spec).plan(self.validate(config))

    def build(self, config: Mapping[str, Any], *, categorical_features=None, random_state=None):
        """An unfitted scikit-learn estimator (or pipeline) for ``config``.

        It accepts a float matrix with NaN for missing values; ``categorical_features``
        (boolean mask or column indices) one-hot encodes those columns.
        """
        from ensembo.spaces.build import build

        return build(
            self.plan(config), categorical_features=categorical_features, random_state=random_state
        )

    def __repr__(self) -> str:
        return f"Space(name={self.name!r}, dimension={self.dimension})"


def _active(values: dict[str, Any], vector: np.ndarray) -> dict[str, Any]:
    """The ``values`` (one per hyperparameter, in order) that ``vector`` has active."""
    return {
        name: value for (name, value), x in zip(values.items(), vector, strict=True)
        if not np.isnan(x)
    }
