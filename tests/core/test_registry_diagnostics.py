"""Plugin-author mistakes the registry reports instead of ignoring or misattributing.

Covers: misspelt and undecorated hooks, third-party names colliding with ensembo's own,
bugs inside factories versus rejected options, protocol messages naming the missing
members, non-callable factories, the "some plugins failed" hint on unknown names, and
how ``ensembo plugins`` and ``ensembo -v`` show all of this.
"""

from __future__ import annotations

import json
import logging
import traceback
import types

import pytest

from ensembo import hookimpl
from ensembo.cli import main, plugins_command
from ensembo.components import build
from ensembo.errors import (
    DuplicatePluginError,
    EnsemboError,
    PluginContractError,
    UnknownComponentError,
)
from ensembo.plugin_checks import (
    check_protocol,
    find_hook_mistakes,
    new_plugin_manager,
    protocol_members,
)
from ensembo.plugins.initial_designs.random_design import RandomDesign
from ensembo.protocols import DifferentiableSurrogate, EnsembleStrategy, Loss
from ensembo.registry import OWN_DISTRIBUTION, PluginConflict, Registry


class _Surrogate:
    """A minimal valid surrogate."""

    def fit(self, batch, y, rng):
        pass

    def predict(self, batch):
        return None, None


class _NoUpdate:
    """An ensemble strategy that forgot ``update``."""

    def targets(self, history, context):
        return history.losses()

    def ensemble(self, history, context):
        return None


def _failure_messages(reg: Registry) -> dict[str, str]:
    return {f.entry_point: f.error for f in reg.failures}


# --- 1. misspelt and undecorated hooks -------------------------------------------------


class _Typos:
    @hookimpl
    def ensembo_add_ensemble_strategy(self):  # singular: not a hook
        return {"never": _NoUpdate}

    @hookimpl
    def ensembo_trial_finish(self, study, trial):  # lifecycle hook, misspelt
        pass

    @hookimpl
    def ensembo_make_coffee(self):  # nothing close
        pass


class _Undecorated:
    def ensembo_add_surrogates(self):  # forgot @hookimpl
        return {"forgotten": _Surrogate}


def test_a_misspelt_hook_is_reported_with_the_hook_it_probably_meant(caplog):
    with caplog.at_level(logging.WARNING, logger="ensembo.registry"):
        reg = Registry.from_plugins({"typo-dist": _Typos()})
    messages = _failure_messages(reg)
    assert messages["typo-dist.ensembo_add_ensemble_strategy"] == (
        "unknown hook 'ensembo_add_ensemble_strategy' "
        "(did you mean 'ensembo_add_ensemble_strategies'?)"
    )
    assert messages["typo-dist.ensembo_trial_finish"] == (
        "unknown hook 'ensembo_trial_finish' (did you mean 'ensembo_trial_finished'?)"
    )
    assert messages["typo-dist.ensembo_make_coffee"] == (
        "unknown hook 'ensembo_make_coffee'; the hooks are listed in ensembo.hookspecs"
    )
    assert {f.distribution for f in reg.failures} == {"typo-dist"}
    assert "did you mean 'ensembo_add_ensemble_strategies'" in caplog.text


def test_a_hook_function_without_hookimpl_is_reported():
    reg = Registry.from_plugins({"forgetful": _Undecorated()})
    assert _failure_messages(reg) == {
        "forgetful.ensembo_add_surrogates": (
            "defines ensembo_add_surrogates without @ensembo.hookimpl, so pluggy ignores it"
        )
    }
    assert "forgotten" not in reg.names("surrogate")


def test_module_plugins_are_checked_too():
    module = types.ModuleType("my_plugin")

    def ensembo_add_losses():
        return {}

    module.ensembo_add_losses = ensembo_add_losses
    module.ensembo_add_loss = hookimpl(lambda: {})
    reg = Registry.from_plugins({"module-dist": module})
    assert set(_failure_messages(reg)) == {
        "module-dist.ensembo_add_losses",
        "module-dist.ensembo_add_loss",
    }


def test_correct_plugins_and_the_built_ins_report_no_mistakes():
    class Good:
        @hookimpl
        def ensembo_add_surrogates(self):
            return {"good": _Surrogate}

        @hookimpl
        def ensembo_trial_finished(self, trial):
            pass

        def helper(self):  # not named like a hook: none of the registry's business
            pass

    reg = Registry.from_plugins({"good-dist": Good()}, builtins=True)
    assert reg.failures == []
    assert reg.entry("surrogate", "good").distribution == "good-dist"
    assert reg.entry("surrogate", "gp").distribution == OWN_DISTRIBUTION


def test_a_plugin_that_cannot_be_inspected_does_not_stop_the_registry():
    class Hostile:
        def __getattr__(self, name):
            raise RuntimeError("no attribute lookups, please")

    reg = Registry.from_plugins({"hostile": Hostile(), "good": _Undecorated()})
    assert list(_failure_messages(reg)) == ["good.ensembo_add_surrogates"]


class _Observer:
    def ensembo_trial_finished(self, study, trial):  # forgot @hookimpl
        pass

    @hookimpl
    def ensembo_study_finished(self, study):
        pass

    @hookimpl
    def ensembo_study_finish(self, study):
        pass


@pytest.mark.parametrize("registered", [True, False], ids=["registered", "alone"])
def test_hook_mistakes_of_a_study_callback_can_be_found_the_same_way(registered):
    observer = _Observer()
    manager = new_plugin_manager()
    if registered:
        manager.register(observer)
    assert sorted(find_hook_mistakes(observer, manager if registered else None)) == [
        ("ensembo_study_finish", (
            "unknown hook 'ensembo_study_finish' (did you mean 'ensembo_study_finished'?)"
        )),
        ("ensembo_trial_finished", (
            "defines ensembo_trial_finished without @ensembo.hookimpl, so pluggy ignores it"
        )),
    ]


# --- 2. names colliding with ensembo's own --------------------------------------------


class _OwnDesigns:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"grid": RandomDesign}


class _ShadowDesigns:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"grid": RandomDesign, "shadow-only": RandomDesign}


@pytest.mark.parametrize("own_first", [True, False], ids=["own-first", "third-party-first"])
def test_ensembo_keeps_its_names_and_the_third_party_claim_is_ignored(own_first):
    plugins = {OWN_DISTRIBUTION: _OwnDesigns(), "shadow": _ShadowDesigns()}
    if not own_first:
        plugins = dict(reversed(plugins.items()))
    reg = Registry.from_plugins(plugins)
    assert reg.entry("initial_design", "grid").distribution == OWN_DISTRIBUTION  # no raise
    assert reg.entry("initial_design", "shadow-only").distribution == "shadow"
    (conflict,) = reg.conflicts
    assert conflict.winner == OWN_DISTRIBUTION and conflict.ignored == "shadow"
    assert conflict.describe() == (
        "shadow's initial design 'grid' ignored: the name belongs to ensembo"
    )


def test_two_third_parties_claiming_a_name_stay_ambiguous():
    class Other:
        @hookimpl
        def ensembo_add_initial_designs(self):
            return {"grid": RandomDesign}

    reg = Registry.from_plugins({"shadow": _ShadowDesigns(), "other": Other()})
    assert reg.conflicts == [
        PluginConflict(kind="initial_design", name="grid", distributions=("shadow", "other"))
    ]
    assert reg.conflicts[0].describe() == "conflict: initial design 'grid' from shadow and other"
    with pytest.raises(DuplicatePluginError, match="'shadow'.*'other'"):
        reg.entry("initial_design", "grid")


def test_a_default_study_works_next_to_a_plugin_reusing_a_built_in_name(flat_space):
    from ensembo import Study

    class ShadowGP:
        @hookimpl
        def ensembo_add_surrogates(self):
            return {"gp": _Surrogate}

    reg = Registry.from_plugins({"shadow": ShadowGP()}, builtins=True)
    assert reg.entry("surrogate", "gp").distribution == OWN_DISTRIBUTION
    Study(flat_space, registry=reg, seed=0)  # used to raise DuplicatePluginError


def _use_registry(monkeypatch, reg: Registry) -> None:
    monkeypatch.setattr(plugins_command, "registry", lambda: reg)


def test_plugins_command_reports_an_ignored_claim_in_text_and_json(monkeypatch, capsys):
    _use_registry(
        monkeypatch, Registry.from_plugins({OWN_DISTRIBUTION: _OwnDesigns(), "s": _ShadowDesigns()})
    )
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "s's initial design 'grid' ignored: the name belongs to ensembo\n" in out
    assert "conflict:" not in out
    assert main(["plugins", "--json"]) == 0
    (conflict,) = json.loads(capsys.readouterr().out)["conflicts"]
    assert conflict == {
        "kind": "initial_design", "name": "grid", "distributions": ["ensembo", "s"],
        "winner": "ensembo",
    }
    assert main(["plugins", "grid"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("grid (initial design, from ensembo)")
    assert "  s's initial design 'grid' ignored: the name belongs to ensembo\n" in out


# --- 3. a bug inside a factory is not "rejected options" ----------------------------------


class _BuggyDesign(RandomDesign):
    def __init__(self, size: int = 1):
        self.table = [0] * size + None  # a bug unrelated to the options


class _NoSignature:
    """A factory whose signature ``inspect`` cannot read."""

    __signature__ = "not a signature"

    def __init__(self, fail: bool = False):
        self.fail = fail

    def __call__(self, size: int = 1):
        if self.fail:
            return len(None)  # a bug inside
        return RandomDesign()


class _Factories:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {
            "buggy": _BuggyDesign,
            "opaque": _NoSignature(),
            "opaque-buggy": _NoSignature(fail=True),
        }


def test_a_type_error_inside_a_factory_keeps_its_traceback_and_names_the_component():
    reg = Registry.from_plugins({"dist-b": _Factories()})
    with pytest.raises(TypeError) as caught:
        reg.create("initial_design", "buggy", size=2)
    assert not isinstance(caught.value, PluginContractError)
    assert caught.value.__notes__ == ["while building initial design 'buggy' (from dist-b)"]
    frames = [frame.name for frame in traceback.extract_tb(caught.value.__traceback__)]
    assert frames[-1] == "__init__"  # where the bug is


def test_options_that_do_not_fit_the_signature_are_still_rejected_options():
    reg = Registry.from_plugins({"dist-b": _Factories()})
    with pytest.raises(PluginContractError, match=r"'buggy' \(from dist-b\) rejected options"):
        reg.create("initial_design", "buggy", sise=2)


def test_without_a_readable_signature_only_errors_of_the_call_itself_are_rejections():
    reg = Registry.from_plugins({"dist-b": _Factories()})
    with pytest.raises(PluginContractError, match=r"'opaque' \(from dist-b\) rejected options"):
        reg.create("initial_design", "opaque", sise=2)
    with pytest.raises(TypeError) as caught:
        reg.create("initial_design", "opaque-buggy")
    assert not isinstance(caught.value, PluginContractError)
    assert caught.value.__notes__ == ["while building initial design 'opaque-buggy' (from dist-b)"]


def _raise_bug():
    error = TypeError("boom")
    error.add_note("while building surrogate 'x' (from d)")
    raise error


def test_cli_prints_an_unexpected_error_briefly_and_its_traceback_under_v(monkeypatch, capsys):
    monkeypatch.setattr(plugins_command, "registry", _raise_bug)
    assert main(["plugins"]) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert err.splitlines() == [
        "ensembo: error: TypeError: boom",
        "  while building surrogate 'x' (from d)",
        "ensembo: this looks like a bug; run with -v to see the traceback",
    ]
    assert main(["-v", "plugins"]) == 1
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and "in _raise_bug" in err
    assert err.splitlines()[-2:] == [
        "ensembo: error: TypeError: boom",
        "  while building surrogate 'x' (from d)",
    ]


def test_cli_shows_the_traceback_of_a_user_error_only_under_v(capsys):
    assert main(["plugins", "eos"]) == 2
    assert "Traceback" not in capsys.readouterr().err
    assert main(["-v", "plugins", "eos"]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.splitlines()[-1].startswith("ensembo: error: no registered component is called")


# --- 4. protocol messages name what is missing ------------------------------------------


def test_protocol_members_are_read_from_the_protocol_and_its_bases():
    assert protocol_members(EnsembleStrategy) == ["ensemble", "targets", "update"]
    assert {"fit", "predict", "predict_with_gradients"} <= set(
        protocol_members(DifferentiableSurrogate)
    )
    assert protocol_members(Loss) == ["__call__"]


class _Strategies:
    @hookimpl
    def ensembo_add_ensemble_strategies(self):
        return {"no-update": _NoUpdate}


def test_a_registered_component_missing_a_method_is_named_with_it():
    reg = Registry.from_plugins({"dist-s": _Strategies()})
    with pytest.raises(PluginContractError) as caught:
        reg.create("ensemble_strategy", "no-update")
    assert str(caught.value) == (
        "ensemble strategy 'no-update' (from dist-s) built a _NoUpdate, which does not "
        "implement EnsembleStrategy: missing update (see ensembo.protocols)."
    )


def test_an_object_given_directly_reads_well():
    with pytest.raises(PluginContractError) as caught:
        build("ensemble_strategy", _NoUpdate())  # how Study checks objects it is given
    assert str(caught.value) == (
        "the _NoUpdate given as the ensemble strategy does not implement EnsembleStrategy: "
        "missing update (see ensembo.protocols)."
    )


def test_a_surrogate_names_what_each_accepted_protocol_misses():
    with pytest.raises(PluginContractError) as caught:
        check_protocol("surrogate", object())
    assert str(caught.value) == (
        "the object given as the surrogate does not implement Surrogate or Proposer: "
        "missing fit, predict (for Surrogate) or propose (for Proposer) "
        "(see ensembo.protocols)."
    )


# --- 5. a factory that is not callable --------------------------------------------------


class _KNNRegSurrogate(_Surrogate):
    pass


class _Instances:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"knnreg": _KNNRegSurrogate(), "fine": _Surrogate}


def test_an_instance_returned_as_factory_is_a_failure_not_an_entry():
    reg = Registry.from_plugins({"dist-i": _Instances()})
    assert _failure_messages(reg) == {
        "dist-i.ensembo_add_surrogates": (
            "factory for surrogate 'knnreg' is a _KNNRegSurrogate instance, not a callable; "
            "return the class or a function"
        )
    }
    assert reg.names("surrogate") == ["fine"]


# --- 6. unknown names mention the plugins that failed ----------------------------------


class _Broken:
    @hookimpl
    def ensembo_add_losses(self):
        raise RuntimeError("boom while registering")


def test_an_unknown_name_mentions_distributions_that_failed_to_load():
    reg = Registry.from_plugins({"good": _Instances(), "bad": _Broken(), "typo": _Typos()})
    with pytest.raises(UnknownComponentError) as caught:
        reg.entry("surrogate", "knnreg")
    assert str(caught.value).endswith(
        "Available: fine; 3 plugin distributions failed to load: good, bad, typo "
        "(see `ensembo plugins`)."
    )
    single = Registry.from_plugins({"bad": _Broken()})
    one_failed = r"; 1 plugin distribution failed to load: bad \(see `ensembo plugins`\)\.$"
    with pytest.raises(UnknownComponentError, match=one_failed):
        single.entry("loss", "mine")


def test_an_unknown_name_without_failures_has_no_hint():
    reg = Registry.from_plugins({"ok": _Strategies()})
    with pytest.raises(UnknownComponentError) as caught:
        reg.entry("ensemble_strategy", "something")
    assert str(caught.value) == "Unknown ensemble strategy 'something'. Available: no-update."
    assert caught.value.hint == ""
    assert isinstance(caught.value, EnsemboError)


# --- 7. listing layout ----------------------------------------------------------------------


def test_listing_columns_fit_the_longest_name(monkeypatch, capsys):
    long_name = "a-really-quite-long-surrogate-name-indeed"

    class Long:
        @hookimpl
        def ensembo_add_surrogates(self):
            return {long_name: _Surrogate, "short": _Surrogate}

    _use_registry(monkeypatch, Registry.from_plugins({"dist-l": Long()}))
    assert main(["plugins"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if line.endswith(" dist-l")]
    assert len(rows) == 2
    assert {row.index(" dist-l") for row in rows} == {2 + len(long_name)}


def test_the_listing_marks_a_name_two_third_parties_claim_as_unusable(monkeypatch, capsys):
    """It was listed under one distribution as if it could be used."""

    class Other:
        @hookimpl
        def ensembo_add_initial_designs(self):
            return {"grid": RandomDesign}

    _use_registry(monkeypatch, Registry.from_plugins({"shadow": _ShadowDesigns(),
                                                      "other": Other()}))
    assert main(["plugins"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (grid,) = [line for line in lines if line.split()[:1] == ["grid"]]
    assert grid.endswith("(unusable: registered twice, see conflict below)")
    (shadow_only,) = [line for line in lines if line.split()[:1] == ["shadow-only"]]
    assert "unusable" not in shadow_only


# --- 8. names that are not strings, clashes inside one distribution, blocking -------------


class _IntNames:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {1: _Surrogate, None: _Surrogate, "": _Surrogate, "fine-too": _Surrogate}


def test_a_name_that_is_not_a_string_is_refused_without_breaking_the_others(
    monkeypatch, capsys
):
    """Sorting mixed keys broke `ensembo plugins` and every unknown-name lookup, for
    every plugin, with a bare TypeError naming no one."""
    reg = Registry.from_plugins({"dist-int": _IntNames(), "good": _Instances()})
    failures = [f for f in reg.failures if f.distribution == "dist-int"]
    assert [f.entry_point for f in failures] == ["dist-int.ensembo_add_surrogates"] * 3
    assert "surrogate name 1 is not a non-empty string" in failures[0].error
    assert reg.names("surrogate") == ["fine", "fine-too"]
    with pytest.raises(UnknownComponentError, match="dist-int"):
        reg.entry("surrogate", "knnn")
    _use_registry(monkeypatch, reg)
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "failed to load dist-int.ensembo_add_surrogates from dist-int: surrogate name 1" in out


class _TwoEntryPointsA:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"mean-s": _Surrogate}


class _TwoEntryPointsB:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"mean-s": _KNNRegSurrogate}


def test_two_entry_points_of_one_distribution_clashing_name_both_and_keep_the_first():
    """Reported as a conflict 'from d and d' with advice to uninstall or block one of
    them, which would drop both; it is the author's mistake, so say which entry points."""
    manager = new_plugin_manager()
    manager.register(_TwoEntryPointsA(), name="ens-twoep:surrogates")
    manager.register(_TwoEntryPointsB(), name="ens-twoep:extra")
    reg = Registry(manager, {"ens-twoep:surrogates": "ens-twoep", "ens-twoep:extra": "ens-twoep"})
    assert reg.conflicts == []
    assert reg.factory("surrogate", "mean-s") is _Surrogate
    (failure,) = reg.failures
    assert failure.distribution == "ens-twoep"
    assert failure.entry_point == "ens-twoep:extra.ensembo_add_surrogates"
    assert failure.error == (
        "surrogate 'mean-s' is also registered by ens-twoep:surrogates, another entry point "
        "of the same distribution 'ens-twoep'; ens-twoep:surrogates's is used. Register the "
        "name from one entry point only, or rename one of them"
    )


def test_a_clash_inside_one_distribution_does_not_hide_a_conflict_with_another():
    manager = new_plugin_manager()
    for plugin, name in ((_TwoEntryPointsA(), "d:a"), (_TwoEntryPointsB(), "d:b"),
                         (_TwoEntryPointsA(), "other")):
        manager.register(plugin, name=name)
    reg = Registry(manager, {"d:a": "d", "d:b": "d", "other": "other"})
    assert [c.distributions for c in reg.conflicts] == [("d", "other")]
    with pytest.raises(DuplicatePluginError):
        reg.entry("surrogate", "mean-s")


class _FakeEntryPoint:
    """What ``importlib.metadata.entry_points`` yields, for a distribution not installed."""

    def __init__(self, distribution: str, plugin: object):
        self.dist = types.SimpleNamespace(name=distribution)
        self.name, self.value, self._plugin = "main", "fake.hooks", plugin

    def load(self):
        return self._plugin


@pytest.mark.parametrize("written", ["ens_intname", "ENS-IntName", "ens.intname", "ens-_intname"])
def test_blocked_distributions_are_matched_as_pip_matches_names(monkeypatch, written):
    """`ENSEMBO_BLOCK_PLUGINS=ens_intname` did not block `ens-intname`, though pip
    treats them as one name (PEP 503)."""
    import importlib.metadata

    fakes = [_FakeEntryPoint("ens-intname", _IntNames()), _FakeEntryPoint("good", _Instances())]
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: fakes)
    monkeypatch.setenv("ENSEMBO_BLOCK_PLUGINS", f"other, {written}")
    monkeypatch.delenv("ENSEMBO_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    reg = Registry.from_entry_points()
    assert reg.names("surrogate") == ["fine"]
    assert not [f for f in reg.failures if f.distribution == "ens-intname"]


class _NoOptions:
    def fit(self, batch, y, rng):
        pass

    def predict(self, batch):
        return None, None


def _no_options_fn():
    return _NoOptions()


class _NoOptionFactories:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"plain": _NoOptions, "plain-fn": _no_options_fn}


@pytest.mark.parametrize("name", ["plain", "plain-fn"])
def test_an_option_for_a_factory_that_takes_none_says_its_options_are_none(name):
    """An empty signature was treated like an unreadable one, so the message was
    Python's 'takes no arguments' instead of ensembo's documented format."""
    reg = Registry.from_plugins({"my-dist": _NoOptionFactories()})
    with pytest.raises(PluginContractError) as caught:
        reg.create("surrogate", name, k=1)
    assert str(caught.value) == (
        f"surrogate {name!r} (from my-dist) rejected options ['k']: "
        "unknown: k; its options: none"
    )


def test_a_distribution_whose_metadata_has_no_name_is_reported_not_fatal(tmp_path, monkeypatch):
    """While pip writes or removes a plugin its METADATA can be empty; every ensembo
    command (a running `ensembo resume` in the test suite) then died with a TypeError
    from matching the name None. It is reported and not imported."""
    import sys

    info = tmp_path / "half_installed-0.0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("")
    (info / "entry_points.txt").write_text("[ensembo]\nhalf_installed = half_installed\n")
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    monkeypatch.delenv("ENSEMBO_DISABLE_PLUGIN_AUTOLOAD", raising=False)
    reg = Registry.from_entry_points()
    [failure] = [f for f in reg.failures if f.entry_point.startswith("half_installed")]
    assert failure.distribution == "<unnamed distribution>"
    assert "metadata has no name" in failure.error
    assert "half_installed" not in sys.modules
    assert "gp" in reg.names("surrogate")
