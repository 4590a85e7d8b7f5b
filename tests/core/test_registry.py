"""Plugin registry: lookup, conflicts, broken plugins, protocol checks."""

from __future__ import annotations

import pytest

from ensembo import hookimpl
from ensembo.errors import (
    ComponentOptionError,
    DuplicatePluginError,
    EnsemboError,
    PluginContractError,
    UnknownComponentError,
)
from ensembo.plugins.initial_designs.random_design import RandomDesign
from ensembo.registry import Registry, registry


class _DesignsA:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"grid": RandomDesign, "only-a": RandomDesign}


class _DesignsB:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"grid": RandomDesign}


class _Broken:
    @hookimpl
    def ensembo_add_losses(self):
        raise RuntimeError("boom while registering")


class _NotADesign:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"bogus": lambda: object()}


def test_builtins_are_registered_through_entry_points():
    reg = registry()
    assert "random" in reg.names("initial_design")
    assert reg.entry("ensemble_strategy", "best").distribution == "ensembo"


def test_duplicate_name_names_both_distributions():
    reg = Registry.from_plugins({"dist-a": _DesignsA(), "dist-b": _DesignsB()})
    with pytest.raises(DuplicatePluginError, match="dist-a.*dist-b"):
        reg.entry("initial_design", "grid")
    # the conflict does not take the other names down
    assert reg.entry("initial_design", "only-a").distribution == "dist-a"
    assert reg.conflicts[0].name == "grid"


def test_plugin_raising_during_registration_is_reported_and_others_load():
    reg = Registry.from_plugins({"good": _DesignsA(), "bad": _Broken()})
    assert [f.distribution for f in reg.failures] == ["bad"]
    assert "boom while registering" in reg.failures[0].error
    assert "only-a" in reg.names("initial_design")


def test_unknown_name_suggests_close_match():
    reg = Registry.from_plugins({"dist-a": _DesignsA()})
    with pytest.raises(
        UnknownComponentError, match=r"did you mean 'only-a'\?.*Available: grid, only-a"
    ):
        reg.entry("initial_design", "only-b")


def test_factory_product_is_checked_against_protocol():
    reg = Registry.from_plugins({"dist-x": _NotADesign()})
    with pytest.raises(PluginContractError, match="'bogus' \\(from dist-x\\).*InitialDesign"):
        reg.create("initial_design", "bogus")


def test_bad_options_name_the_plugin():
    reg = Registry.from_plugins({"dist-a": _DesignsA()})
    with pytest.raises(PluginContractError, match="'grid' \\(from dist-a\\) rejected options"):
        reg.create("initial_design", "grid", n_points=3)


def test_an_unknown_option_is_named_with_the_valid_ones():
    reg = Registry.from_plugins({"dist-s": _StrictDesigns()})
    named = r"unknown: sise \(did you mean size\?\); its options: size, step$"
    with pytest.raises(PluginContractError, match=named):
        reg.create("initial_design", "strict", sise=2)


class _OwnOptionError(EnsemboError, ValueError):
    """A plugin's own error, which already names the plugin."""


class _StrictDesign(RandomDesign):
    def __init__(self, size: int = 1, step: float = 1.0):
        if size < 1:
            raise ValueError(f"size must be at least 1, got {size}")
        if step <= 0:
            raise _OwnOptionError(f"initial design 'strict': option 'step' must be > 0, got {step}")


class _StrictDesigns:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"strict": _StrictDesign}


def test_bad_option_values_name_the_plugin_and_the_option():
    reg = Registry.from_plugins({"dist-s": _StrictDesigns()})
    with pytest.raises(
        ComponentOptionError, match=r"'strict' \(from dist-s\) rejected options \{'size': 0\}"
    ):
        reg.create("initial_design", "strict", size=0)


def test_a_plugins_own_error_passes_unchanged():
    reg = Registry.from_plugins({"dist-s": _StrictDesigns()})
    with pytest.raises(_OwnOptionError) as caught:
        reg.create("initial_design", "strict", step=0.0)
    assert str(caught.value) == "initial design 'strict': option 'step' must be > 0, got 0.0"


def test_a_kwargs_factory_that_declares_its_options_lists_them_on_a_typo():
    named = r"unknown: kernal \(did you mean kernel\?\); its options: kernel, "
    with pytest.raises(PluginContractError, match=named):
        registry().create("surrogate", "gp", kernal="laplace")
    named = r"unknown: n_tree \(did you mean n_trees\?\); its options: n_trees, "
    with pytest.raises(PluginContractError, match=named):
        registry().create("surrogate", "rf", n_tree=5)
