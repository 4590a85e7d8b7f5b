"""A ``functools.partial`` factory binding one parameter both by position and by keyword
can never build, like one binding a keyword its function does not take: building it was
blamed on the user's options (PluginContractError 'rejected options []', even with none
given), and ``ensembo plugins NAME`` said its signature "cannot be read"."""

from __future__ import annotations

import functools

import pytest

from ensembo import hookimpl
from ensembo.cli import plugins_command
from ensembo.errors import PluginContractError
from ensembo.registry import Registry


class _Surrogate:
    """A surrogate for the tests."""

    def __init__(self, k: int = 5, mode: str = "plain"):
        self.k, self.mode = k, mode

    def fit(self, batch, y, rng):
        pass

    def predict(self, batch):
        return None, None


class _Plugin:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {
            "twice": functools.partial(_Surrogate, 3, k=4),
            "by-position": functools.partial(_Surrogate, 3),
        }


@pytest.fixture
def reg() -> Registry:
    return Registry.from_plugins({"my-dist": _Plugin()})


@pytest.mark.parametrize("options", [{}, {"mode": "fast"}])
def test_building_a_partial_bound_twice_is_the_plugins_bug(reg, options):
    with pytest.raises(TypeError, match="multiple values for argument 'k'") as caught:
        reg.create("surrogate", "twice", **options)
    assert not isinstance(caught.value, PluginContractError)
    assert caught.value.__notes__ == ["while building surrogate 'twice' (from my-dist)"]


def test_ensembo_plugins_says_why_a_partial_bound_twice_cannot_build(reg):
    described = plugins_command.describe(reg.entry("surrogate", "twice"))
    assert described["options_unknown"] == (
        "the factory is a functools.partial of _Surrogate whose bound arguments it cannot "
        "take (multiple values for argument 'k'): building it fails"
    )


def test_a_partial_binding_by_position_still_builds_and_names_unknown_options(reg):
    assert reg.create("surrogate", "by-position", mode="fast").k == 3
    with pytest.raises(PluginContractError, match=r"unknown: zz; its options: mode"):
        reg.create("surrogate", "by-position", zz=1)
