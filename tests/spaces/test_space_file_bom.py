"""A space file saved as UTF-8 with a byte order mark (as Notepad saves it) is UTF-8:
the JSON and TOML readers refused it ('not valid json: Unexpected UTF-8 BOM (decode
using utf-8-sig)', 'not valid toml: Invalid statement (at line 1, column 1)')."""

from __future__ import annotations

import pytest

from ensembo import spaces

BOM = "\ufeff"
TEXTS = {
    "s.json": '{"params": {"x": {"type": "float", "low": -1, "high": 1}}}\n',
    "s.toml": '[params]\nx = {type = "float", low = -1, high = 1}\n',
    "s.yaml": "params:\n  x: {type: float, low: -1, high: 1}\n",  # YAML read it already
}


@pytest.mark.parametrize("name", sorted(TEXTS))
def test_a_file_with_a_byte_order_mark_loads(tmp_path, name):
    path = tmp_path / name
    path.write_text(BOM + TEXTS[name], encoding="utf-8")
    assert spaces.problems_in(path) == []
    assert spaces.load(path).names == ("x",)


def test_a_json_file_with_a_byte_order_mark_reports_its_duplicate_key(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(
        BOM + '{"params": {\n"x": {"type": "float", "low": 0, "high": 1},\n'
        '"x": {"type": "float", "low": 0, "high": 2}}}\n',
        encoding="utf-8",
    )
    assert [str(p) for p in spaces.problems_in(path)] == [
        "d.json: params: duplicate key 'x' on line 3 (names must be unique)"
    ]
