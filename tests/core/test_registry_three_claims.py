"""Three or more distributions claiming one name are all named (plugin audit F6): the
error named two, and removing one of them left the name ambiguous still."""

from __future__ import annotations

import pickle

import pytest

from ensembo import hookimpl
from ensembo.cli import main, plugins_command
from ensembo.errors import DuplicatePluginError
from ensembo.plugins.initial_designs.random_design import RandomDesign
from ensembo.registry import PluginConflict, Registry


class _Grid:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"grid": RandomDesign}


def test_every_claimant_is_named():
    reg = Registry.from_plugins({"a": _Grid(), "b": _Grid(), "c": _Grid()})
    assert reg.conflicts == [
        PluginConflict(kind="initial_design", name="grid", distributions=("a", "b", "c"))
    ]
    assert reg.conflicts[0].describe() == "conflict: initial design 'grid' from a, b and c"
    with pytest.raises(DuplicatePluginError,
                       match=r"'grid' is registered 3 times: by distributions 'a', 'b' and 'c'"):
        reg.entry("initial_design", "grid")


def test_two_claimants_keep_their_message():
    reg = Registry.from_plugins({"a": _Grid(), "b": _Grid()})
    with pytest.raises(DuplicatePluginError,
                       match=r"registered twice: by distribution 'a' and by distribution 'b'"):
        reg.entry("initial_design", "grid")


def test_the_listing_says_how_many_times_a_name_is_registered(monkeypatch, capsys):
    """It said 'registered twice' above the conflict line naming three."""
    reg = Registry.from_plugins({"a": _Grid(), "b": _Grid(), "c": _Grid()})
    monkeypatch.setattr(plugins_command, "registry", lambda: reg)
    assert main(["plugins"]) == 0
    lines = capsys.readouterr().out.splitlines()
    (grid,) = [line for line in lines if line.split()[:1] == ["grid"]]
    assert grid.endswith("(unusable: registered 3 times, see conflict below)")
    assert "conflict: initial design 'grid' from a, b and c" in lines


@pytest.mark.parametrize("claimants", [("a", "b"), ("a", "b", "c")])
def test_the_error_survives_pickling(claimants):
    """A worker process raising it sends it pickled; unpickling called __init__ with the
    message alone and failed."""
    reg = Registry.from_plugins({name: _Grid() for name in claimants})
    with pytest.raises(DuplicatePluginError) as caught:
        reg.entry("initial_design", "grid")
    caught.value.add_note("while building the study")
    again = pickle.loads(pickle.dumps(caught.value))
    assert type(again) is DuplicatePluginError
    assert str(again) == str(caught.value)
    assert (again.kind, again.name, again.distributions) == (
        "initial_design", "grid", claimants)
    assert again.__notes__ == ["while building the study"]
