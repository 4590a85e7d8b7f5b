"""A factory that declares no settings class (``declares_options``): a ``TypeError`` its
signature does not explain is the plugin's bug, with its traceback, wherever it was
raised. Its own ``raise TypeError("k must be an int")`` and ``raise TypeError("requires
torch")`` look alike in the traceback, so neither is blamed on the options (a3567f9 made
the first an option error and so the second too); a ``ValueError`` is the option error.
Factories that declare their settings: test_registry_declared_options.py."""

from __future__ import annotations

import functools

import attrs
import pytest

from ensembo import hookimpl
from ensembo.errors import ComponentOptionError
from ensembo.plugins.initial_designs.random_design import RandomDesign
from ensembo.registry import Registry


class TypedK(RandomDesign):
    def __init__(self, k: int = 5):
        if not isinstance(k, int):
            raise TypeError(f"k must be an int, got {type(k).__name__}")
        self.k = k


class Kwargs(RandomDesign):
    def __init__(self, **options):
        self.k = options.pop("k", 5)
        if options:
            raise TypeError(f"unexpected options {sorted(options)}")


@attrs.define
class AttrsTyped(RandomDesign):
    k: int = 5

    def __attrs_post_init__(self):
        if not isinstance(self.k, int):
            raise TypeError(f"k must be an int, got {type(self.k).__name__}")


def typed_function(k=5, scale=1):
    if not isinstance(k, int):
        raise TypeError("k must be an int")
    return RandomDesign()


class NeedsTorch(RandomDesign):
    def __init__(self, k: int = 5):
        raise TypeError("requires torch")


class ValueChecked(RandomDesign):
    def __init__(self, k: int = 5):
        if not isinstance(k, int):
            raise ValueError(f"k must be an int, got {type(k).__name__}")


class Buggy(RandomDesign):
    def __init__(self, k: int = 5):
        self.k = len(None)  # a bug: not about the option


def raises_inside(k):
    raise TypeError("raised deeper than the factory")


class Deeper(RandomDesign):
    def __init__(self, k: int = 5):
        raises_inside(k)


class _Plugin:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"typed": TypedK, "kwargs": Kwargs, "attrs-typed": AttrsTyped,
                "partial": functools.partial(typed_function, scale=2), "buggy": Buggy,
                "deeper": Deeper, "needs-torch": NeedsTorch, "value-checked": ValueChecked}


@pytest.fixture
def reg():
    return Registry.from_plugins({"dist": _Plugin()})


@pytest.mark.parametrize(
    ("name", "options"),
    [("typed", {"k": "3"}), ("kwargs", {"x": 1}), ("attrs-typed", {"k": "3"}),
     ("partial", {"k": 1.5}), ("needs-torch", {"k": 3})],
)
def test_its_own_type_error_is_a_bug_without_declared_settings(reg, name, options):
    with pytest.raises(TypeError) as caught:
        reg.create("initial_design", name, **options)
    assert not isinstance(caught.value, ComponentOptionError)
    assert caught.value.__notes__ == [f"while building initial design '{name}' (from dist)"]


def test_its_own_value_error_is_an_option_error(reg):
    with pytest.raises(ComponentOptionError, match=r"initial design 'value-checked' \(from dist\) "
                       r"rejected options \{'k': '3'\}: k must be an int, got str"):
        reg.create("initial_design", "value-checked", k="3")


@pytest.mark.parametrize("name", ["buggy", "deeper"])
def test_a_type_error_of_an_operation_or_a_callee_stays_a_bug(reg, name):
    with pytest.raises(TypeError) as caught:
        reg.create("initial_design", name, k=3)
    assert not isinstance(caught.value, ComponentOptionError)
    assert caught.value.__notes__ == [f"while building initial design '{name}' (from dist)"]


def test_without_options_its_own_type_error_stays_a_bug():
    class NoOptions(RandomDesign):
        def __init__(self):
            raise TypeError("always")

    class Plugin:
        @hookimpl
        def ensembo_add_initial_designs(self):
            return {"no-options": NoOptions}

    with pytest.raises(TypeError) as caught:
        Registry.from_plugins({"dist": Plugin()}).create("initial_design", "no-options")
    assert not isinstance(caught.value, ComponentOptionError)
