"""Registry messages found wrong by an audit: hooks returning lists, options listed as
rejected that were not, partial factories described by functools' own docstring, and
unknown names that differ from a known one in case only (or are its long form)."""

from __future__ import annotations

import functools

import pytest

from ensembo import hookimpl
from ensembo.bench.optimizers.ensembo_optimizer import EnsemboOptimizer
from ensembo.cli import plugins_command
from ensembo.errors import EnsemboError, PluginContractError, UnknownComponentError
from ensembo.plugin_checks import new_plugin_manager
from ensembo.registry import Registry, registry


class _Surrogate:
    """A mean surrogate for the tests.

    Second paragraph, not shown."""

    def __init__(self, scale: float = 1.0, mode: str = "plain"):
        self.scale, self.mode = scale, mode

    def fit(self, batch, y, rng):
        pass

    def predict(self, batch):
        return None, None


class _NeedsSize(_Surrogate):
    def __init__(self, size: int, mode: str = "plain"):
        super().__init__(mode=mode)


# --- 1. a registration hook must return a mapping ---------------------------------------


class _ReturnsNames:
    @hookimpl
    def ensembo_add_surrogates(self):
        return ["meansurr"]  # was read as dict() pairs: "sequence element #0 has length 8"


class _ReturnsPairs:
    @hookimpl
    def ensembo_add_acquisitions(self):
        return [("pair", _Surrogate)]  # was registered silently


class _ReturnsNothing:
    @hookimpl
    def ensembo_add_surrogates(self):
        return None


def _registry_of(plugin, plugin_name="my-dist:main", distribution="my-dist") -> Registry:
    manager = new_plugin_manager()
    manager.register(plugin, name=plugin_name)
    return Registry(manager, {plugin_name: distribution})


@pytest.mark.parametrize(("plugin", "hook"), [
    (_ReturnsNames(), "ensembo_add_surrogates"),
    (_ReturnsPairs(), "ensembo_add_acquisitions"),
])
def test_a_hook_returning_a_list_is_a_load_failure_naming_the_distribution(plugin, hook):
    reg = _registry_of(plugin)
    assert reg.entries() == []
    (failure,) = reg.failures
    assert failure.distribution == "my-dist"
    assert failure.entry_point == f"my-dist:main.{hook}"
    assert failure.error == (
        f"{hook} of my-dist:main (my-dist) must return a mapping name -> factory, "
        "got list; e.g. return {'my-name': MyClass}"
    )


def test_a_hook_returning_none_registers_nothing_without_a_failure():
    reg = _registry_of(_ReturnsNothing())
    assert reg.entries() == [] and reg.failures == []


# --- 2. only the rejected options are listed as rejected --------------------------------


class _Surrogates:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {
            "meansurr": _Surrogate,
            "sized": _NeedsSize,
            "scaled": functools.partial(_Surrogate, scale=2.0),
            "misbound": functools.partial(_Surrogate, scael=2.0),
        }


@pytest.fixture
def reg() -> Registry:
    return Registry.from_plugins({"my-dist": _Surrogates()})


def test_only_the_unknown_options_are_listed_as_rejected(reg):
    with pytest.raises(PluginContractError) as caught:
        reg.create("surrogate", "meansurr", scale=1, scale2=3, mode="plain")
    assert str(caught.value) == (
        "surrogate 'meansurr' (from my-dist) rejected options ['scale2']: "
        "unknown: scale2 (did you mean scale?); its options: scale, mode"
    )


@pytest.mark.parametrize("options", [{"mode": "plain"}, {}])
def test_a_missing_required_option_is_named_not_the_options_given(reg, options):
    with pytest.raises(PluginContractError) as caught:
        reg.create("surrogate", "sized", **options)
    assert str(caught.value) == (
        "surrogate 'sized' (from my-dist) needs option size (required, not given); "
        "its options: size, mode"
    )


# --- 3. partial factories ---------------------------------------------------------------


def test_a_partial_factory_is_described_by_its_function_with_bound_defaults(reg):
    described = plugins_command.describe(reg.entry("surrogate", "scaled"))
    assert described["summary"] == "A mean surrogate for the tests."
    assert described["options"] == {"scale": {"default": 2.0}, "mode": {"default": "plain"}}


def test_a_partial_binding_a_foreign_keyword_is_not_called_a_kwargs_factory(reg, capsys):
    plugins_command.show(reg.entries(), "misbound", as_json=False)
    out = capsys.readouterr().out
    assert "**kwargs" not in out
    assert "A mean surrogate for the tests." in out
    assert ("options: not declared (the factory is a functools.partial of _Surrogate binding "
            "scael, which it does not take: building it fails; _Surrogate's options: "
            "scale, mode)") in out


def test_building_a_misbound_partial_is_the_plugins_bug_not_the_users_options(reg):
    with pytest.raises(TypeError) as caught:
        reg.create("surrogate", "misbound", scale=3.0)
    assert not isinstance(caught.value, PluginContractError)
    assert caught.value.__notes__ == ["while building surrogate 'misbound' (from my-dist)"]


# --- 4. names differing in case, or spelt out ------------------------------------------


@pytest.mark.parametrize(("given", "meant"), [
    ("GP", "gp"), ("Gp-cond", "gp-cond"), ("RF", "rf"),
    ("random-forest", "rf"), ("RandomForest", "rf"), ("tree-parzen-estimator", "tpe"),
])
def test_an_unknown_surrogate_suggests_the_name_it_spells_differently(given, meant):
    with pytest.raises(UnknownComponentError, match=rf"did you mean {meant!r}\?"):
        registry().entry("surrogate", given)


def test_no_suggestion_for_a_name_like_none_available():
    error = UnknownComponentError("surrogate", "xyz", ["gp", "rf"])
    assert str(error) == "Unknown surrogate 'xyz'. Available: gp, rf."


def test_ensembo_plugins_suggests_across_case():
    with pytest.raises(EnsemboError, match=r"did you mean 'gp'\?"):
        plugins_command.show(registry().entries(), "GP", as_json=False)


# --- 5. ensembo:NAME in a benchmark -----------------------------------------------------


def test_a_misspelt_bench_surrogate_lists_and_suggests_random():
    optimizer = EnsemboOptimizer.from_spec("ensembo:randm")
    with pytest.raises(UnknownComponentError) as caught:
        optimizer.check_registered()
    assert "did you mean 'random'?" in str(caught.value)
    assert "random" in caught.value.available and "gp" in caught.value.available
