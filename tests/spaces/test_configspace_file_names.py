"""An unnamed serialized ConfigSpace read from a file is named by the file, as a DSL
document is: its problems read "space: x.meta.q: ..." as if an experiment's ``space:``
key were at fault."""

from __future__ import annotations

import json

import ConfigSpace as CS

from ensembo import spaces
from ensembo.cli import main


def _write(tmp_path, configspace) -> str:
    path = tmp_path / "tuned.json"
    path.write_text(json.dumps(configspace.to_serialized_dict()))
    return str(path)


def test_the_problems_of_an_unnamed_configspace_file_name_the_file(tmp_path, capsys):
    configspace = CS.ConfigurationSpace()
    configspace.add(CS.Float("x", (0.0, 1.0), meta={"q": 5}))
    assert main(["space", "validate", _write(tmp_path, configspace)]) == 2
    assert "tuned.json: x.meta.q: a step is a number in (0, 1.0], got 5" in capsys.readouterr().err


def test_an_unnamed_configspace_file_takes_the_files_name_and_a_named_one_keeps_its_own(
    tmp_path,
):
    unnamed = CS.ConfigurationSpace()
    unnamed.add(CS.Float("x", (0.0, 1.0)))
    assert spaces.load(_write(tmp_path, unnamed)).name == "tuned.json"
    named = CS.ConfigurationSpace(name="mine")
    named.add(CS.Float("x", (0.0, 1.0)))
    assert spaces.load(_write(tmp_path, named)).name == "mine"
    assert spaces.load(unnamed.to_serialized_dict()).name == "space"
