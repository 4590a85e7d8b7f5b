"""Problems of a space file that hid the file's others, or were not reported as such:
an infinite or NaN number, a file that is not UTF-8, a default off its ``q`` grid."""

from __future__ import annotations

import pytest

from ensembo import spaces
from ensembo.cli import main
from ensembo.errors import SpaceError
from ensembo.spaces.load import embedded_problems
from ensembo.spaces.problems import SpaceDefinitionError

INFINITE_AND_OTHERS = (
    "params:\n"
    "  e: {type: float, low: 0, high: .inf}\n"
    "  k: {type: int, low: 5, high: 1}\n"
    "  d: {type: float, low: 0, high: 1, colour: red}\n"
)
EXPECTED = [
    ("params.e.high: inf is not a finite number; bounds must be finite: write the largest "
     "value worth searching"),
    "params.k: empty range: low 5 must be below high 1",
    ("params.d.colour: unknown key 'colour'; valid keys: type, when, impute, description, low, "
     "high, log, default, q"),
]


def _write(tmp_path, text: str, name: str = "space.yaml"):
    path = tmp_path / name
    path.write_text(text)
    return path


def test_an_infinite_bound_is_reported_with_the_files_other_problems(tmp_path):
    """Only the infinity was reported: normalizing the document raised before the other
    checks ran."""
    path = _write(tmp_path, INFINITE_AND_OTHERS)
    assert [str(p) for p in spaces.problems_in(path)] == [f"space.yaml: {e}" for e in EXPECTED]
    with pytest.raises(SpaceDefinitionError) as raised:
        spaces.load(path)
    assert [str(p) for p in raised.value.problems] == [f"space.yaml: {e}" for e in EXPECTED]


def test_a_nan_default_is_reported_with_the_files_other_problems(tmp_path):
    path = _write(tmp_path, "params:\n  e: {type: float, low: 0, high: 1, default: .nan}\n"
                            "  k: {type: int, low: 5, high: 1}\n")
    assert [str(p) for p in spaces.problems_in(path)] == [
        ("space.yaml: params.e.default: nan is not a finite number; values must be finite (JSON "
         "has no infinity or NaN)"),
        "space.yaml: params.k: empty range: low 5 must be below high 1",
    ]


def test_duplicate_keys_are_reported_with_an_infinite_number(tmp_path):
    """The duplicate keys read_file found were dropped when the document held an
    infinity."""
    path = _write(tmp_path, INFINITE_AND_OTHERS + "  d: {type: float, low: 0, high: 1}\n")
    duplicate = "space.yaml: params: duplicate key 'd' on line 5 (names must be unique)"
    found = [str(p) for p in spaces.problems_in(path)]
    assert found[0].startswith("space.yaml: params.e.high: inf is not a finite number")
    assert found[-1] == duplicate and len(found) == 3  # the last 'd' is the one kept
    with pytest.raises(SpaceDefinitionError) as raised:
        spaces.load(path)
    assert [str(p) for p in raised.value.problems] == found


def test_an_inline_space_reports_an_infinity_with_its_other_problems():
    document = {
        "params": {
            "e": {"type": "float", "low": 0, "high": float("inf")},
            "k": {"type": "int", "low": 5, "high": 1},
        }
    }
    assert [str(p) for p in embedded_problems(document, "exp.yaml: space")] == [
        f"exp.yaml: space.{EXPECTED[0]}",
        f"exp.yaml: space.{EXPECTED[1]}",
    ]


def test_a_file_that_is_not_utf8_is_a_space_error_naming_the_byte(tmp_path, capsys):
    """It failed as "UnicodeDecodeError: 'utf-8' codec can't decode byte 0xe9 ...",
    taken for a bug (exit 1)."""
    path = tmp_path / "f.yaml"
    data = b"params:\n  x: {type: float, low: 0, high: 1, description: caf\xe9}\n"
    path.write_bytes(data)
    position = data.index(b"\xe9")  # 60
    expected = (
        f"f.yaml: not UTF-8 text (byte 0xe9 at position {position}, line 2); save the file as "
        "UTF-8"
    )
    assert main(["space", "validate", str(path)]) == 2
    assert capsys.readouterr().err.splitlines()[0] == expected
    with pytest.raises(SpaceError) as raised:
        spaces.load(path)
    assert str(raised.value) == expected


def test_a_crlf_file_reads_as_before(tmp_path):
    """A guard for the new reading (bytes, then decoded): line ends are read as read_text()
    read them."""
    path = tmp_path / "crlf.yaml"
    path.write_bytes(
        b"params:\r\n  x: {type: float, low: 0, high: 1, description: \"a\r\n b\"}\r\n"
    )
    assert spaces.load(path).document["params"]["x"]["description"] == "a b"


def test_an_off_grid_default_is_reported_with_the_files_other_problems(tmp_path):
    """It was a second-round problem (found when compiling), hidden by any first-round
    one, though the docs list defaults in the first round."""
    path = _write(tmp_path, "params:\n"
                            "  f: {type: float, low: 0, high: 1, q: 0.25, default: 0.3}\n"
                            "  k: {type: int, low: 5, high: 1}\n")
    assert [str(p) for p in spaces.problems_in(path)] == [
        ("space.yaml: params.f.default: 0.3 is not on the grid 0 + k * 0.25; the nearest grid "
         "values are 0.25 and 0.5"),
        "space.yaml: params.k: empty range: low 5 must be below high 1",
    ]


def test_an_infinite_low_is_not_also_reported_as_an_empty_range(tmp_path):
    """'params.b: empty range: low inf must be below high 0.9' said the infinity again, at
    the hyperparameter's own path, which the filter of repeated messages did not cover."""
    path = _write(tmp_path, "params:\n  b: {type: float, low: .inf, high: 0.9}\n")
    expected = ("space.yaml: params.b.low: inf is not a finite number; bounds must be finite: "
                "write the smallest value worth searching")
    assert [str(p) for p in spaces.problems_in(path)] == [expected]
