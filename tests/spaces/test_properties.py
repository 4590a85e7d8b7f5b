"""Property tests over generated trees of hyperparameters (hypothesis).

- decode(encode(configs)) gives back every active value (index and one-hot encodings);
- every inactive column holds exactly what its declared imputation rule says;
- a built estimator receives exactly the active hyperparameters, never an inactive one.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ensembo import spaces

RULES = ["midpoint", "lower", "upper", "default", "none", "fixed"]
PROPERTY_SETTINGS = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)


@st.composite
def leaf(draw, name_of) -> tuple[str, dict]:
    kind = draw(st.sampled_from(["float", "int", "categorical", "ordinal", "bool"]))
    body: dict = {"type": kind}
    if kind == "float":
        log = draw(st.booleans())
        low = draw(st.floats(1e-4, 10.0)) if log else draw(st.floats(-100.0, 100.0))
        high = low * draw(st.floats(2.0, 1e4)) if log else low + draw(st.floats(1e-2, 200.0))
        body.update(low=low, high=high, log=log)
        fixed = low
    elif kind == "int":
        log = draw(st.booleans())
        low = draw(st.integers(1, 20)) if log else draw(st.integers(-50, 50))
        body.update(low=low, high=low + draw(st.integers(1, 100)), log=log)
        fixed = body["high"]
    elif kind == "bool":
        fixed = False
    else:
        values = [f"v{i}" for i in range(draw(st.integers(1, 4)))]
        body["choices" if kind == "categorical" else "sequence"] = values
        fixed = values[-1]
    rule = draw(st.sampled_from(RULES))
    if rule != "midpoint":
        body["impute"] = {"value": fixed} if rule == "fixed" else rule
    return name_of(), body


@st.composite
def tree_documents(draw) -> dict:
    counter = itertools.count()

    def name_of() -> str:
        return f"p{next(counter)}"

    parents: list[tuple[str, dict]] = []  # unconditional top-level leaves, for `when`

    def condition_on_a_parent() -> dict | None:
        if not parents or draw(st.integers(0, 2)) != 0:
            return None
        name, body = draw(st.sampled_from(parents))
        if body["type"] in ("float", "int"):
            middle = (body["low"] + body["high"]) / 2  # a range condition
            middle = int(middle) if body["type"] == "int" else middle  # must be a legal value
            return {name: {draw(st.sampled_from(["gt", "lt"])): middle}}
        values = body.get("choices", body.get("sequence", [True, False]))
        return {name: list(values[: draw(st.integers(1, len(values)))])}

    def scope(depth: int) -> dict:
        params = {}
        for _ in range(draw(st.integers(1, 3))):
            if depth < 2 and draw(st.integers(0, 2)) == 0:
                options = {
                    f"o{i}": scope(depth + 1) if draw(st.booleans()) else {}
                    for i in range(draw(st.integers(2, 3)))
                }
                params[name_of()] = {"type": "choice", "options": options}
                continue
            name, body = draw(leaf(name_of))
            when = condition_on_a_parent()
            if when is not None:
                body["when"] = when
            elif depth == 0 and body["type"] != "ordinal":
                parents.append((name, body))
            params[name] = body
        return params

    # builtins.dict takes any keyword: the "estimator" records exactly what it was given
    return {"name": "generated", "params": scope(0), "estimator": "builtins.dict"}


def _same(a, b) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)
    return a == b


@PROPERTY_SETTINGS
@given(
    document=tree_documents(),
    seed=st.integers(0, 2**16),
    encoding=st.sampled_from(["index", "onehot"]),
)
def test_decode_of_encode_is_identity_on_active_values(document, seed, encoding):
    space = spaces.load(document, encoding=encoding)
    configs = space.sample(20, seed=seed)
    decoded = space.decode(np.nan_to_num(space.encode(configs).values, nan=0.5))
    for original, back in zip(configs, decoded, strict=False):
        assert original.keys() == back.keys()
        assert all(_same(original[k], back[k]) for k in original)


def expected_fill(hp, rule) -> float:
    if rule == "none":
        return math.nan
    named = {"midpoint": 0.5, "lower": 0.0, "upper": 1.0}
    if isinstance(rule, str) and rule in named:
        return named[rule]
    value = hp.default_value if rule == "default" else rule["value"]
    if hasattr(hp, "lower"):
        value = min(max(value, hp.lower), hp.upper)  # ConfigSpace rounds stored bounds
    spread = (
        max(getattr(hp, "size", 2) - 1, 1)
        if hasattr(hp, "choices") or hasattr(hp, "sequence")
        else 1
    )
    return float(hp.to_vector(value)) / spread


@PROPERTY_SETTINGS
@given(document=tree_documents(), seed=st.integers(0, 2**16))
def test_inactive_columns_hold_what_the_declared_rule_says(document, seed):
    space = spaces.load(document)
    declared = {}
    for name in space.names:
        local = name.split(":")[-1]
        declared[name] = _find(document["params"], local).get("impute", "midpoint")
    configs = space.sample(20, seed=seed)
    batch = space.encode(configs)
    for column, name in enumerate(space.names):
        hp = space.to_configspace()[name]
        expected = expected_fill(hp, declared[name])
        for row, config in enumerate(configs):
            if name in config:
                continue
            value = batch.values[row, column]
            assert (math.isnan(value) and math.isnan(expected)) or math.isclose(
                value, expected, abs_tol=1e-12
            )


def _find(params: dict, local: str) -> dict:
    for key, body in params.items():
        if key == local:
            return body
        for option in body.get("options", {}).values():
            found = _find(option, local)
            if found is not None:
                return found
    return None


@PROPERTY_SETTINGS
@given(document=tree_documents(), seed=st.integers(0, 2**16))
def test_built_estimators_receive_exactly_the_active_hyperparameters(document, seed):
    space = spaces.load(document)
    for config in space.sample(20, seed=seed):
        received = space.build(config)
        assert set(received) == {name.split(":")[-1] for name in config}
        for name, value in config.items():
            assert _same(received[name.split(":")[-1]], value)
