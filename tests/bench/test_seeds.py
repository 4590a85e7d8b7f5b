"""``--seeds``: a count or a list of seeds and ranges."""

from __future__ import annotations

import argparse

import pytest

from ensembo.bench.seeds import parse_seeds, seed_list


@pytest.mark.parametrize(("text", "values"), [
    ("3", (0, 1, 2)),
    ("0,5-9", (0, 5, 6, 7, 8, 9)),
    ("7", tuple(range(7))),
    ("4-4", (4,)),
    (" 2, 1-2 ", (1, 2)),  # sorted, without repeats
])
def test_a_count_or_a_list_of_seeds_and_ranges(text, values):
    seeds = parse_seeds(text)
    assert tuple(seeds) == values and len(seeds) == len(values)
    assert str(seeds) == text.strip()  # the report's command shows it as given


@pytest.mark.parametrize("text", ["0", "a", "5-3", "1,,2", "-1", "1-x"])
def test_bad_seeds_are_refused_with_the_expected_forms(text):
    expected = "a count N .* or a list such as 0,5-9|no seeds"
    with pytest.raises(argparse.ArgumentTypeError, match=expected):
        parse_seeds(text)


def test_the_python_api_keeps_taking_a_count():
    assert seed_list(3) == [0, 1, 2] and seed_list(parse_seeds("2-3")) == [2, 3]


@pytest.mark.parametrize(("text", "message"), [
    ("5000000000-5000000000", "seeds are at most 4294967295"),  # four optimizers' runs failed
    ("4294967296", "more than 100000 seeds"),
    ("3-", "expected a count N"),  # read as seed 3
    ("0,7- ", "expected a count N"),
])
def test_seeds_the_optimizers_cannot_take_and_open_ranges_are_refused(text, message):
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        parse_seeds(text)


def test_the_largest_seed_the_optimizers_take_is_accepted():
    assert list(parse_seeds("4294967290-4294967295")) == list(range(4294967290, 4294967296))
