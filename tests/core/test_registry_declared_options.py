"""A factory that declares its options (``declares_options``) is judged by them: an
unknown option is refused from the declared signature, with its close match and the
options it takes, before anything the factory raises itself is considered."""

from __future__ import annotations

import attrs
import pytest

import ensembo
from ensembo import hookimpl
from ensembo.errors import PluginContractError
from ensembo.plugins.initial_designs.random_design import RandomDesign
from ensembo.registry import Registry


@attrs.frozen
class GridSettings:
    k: int = 5
    weights: str = "uniform"


@ensembo.declares_options(GridSettings)
class RefusesUnknownItself(RandomDesign):
    def __init__(self, **options):
        unknown = sorted(set(options) - {"k", "weights"})
        if unknown:
            raise TypeError(f"unexpected options {unknown}")
        self.settings = GridSettings(**options)


class _Plugin:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"declared": RefusesUnknownItself}


@pytest.fixture
def reg():
    return Registry.from_plugins({"dist": _Plugin()})


def test_an_unknown_option_is_refused_from_the_declared_signature_first(reg):
    with pytest.raises(PluginContractError) as caught:
        reg.create("initial_design", "declared", wieghts="distance")
    assert str(caught.value) == (
        "initial design 'declared' (from dist) rejected options ['wieghts']: unknown: "
        "wieghts (did you mean weights?); its options: k, weights")
