"""Every built-in component is documented on its kind's page, and only real ones are."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ensembo.registry import OWN_DISTRIBUTION, registry

PAGES = Path(__file__).resolve().parents[2] / "docs" / "plugins"
PAGE_OF_KIND = {
    "surrogate": "surrogates.md",
    "acquisition": "acquisitions.md",
    "acquisition_optimizer": "acquisition-optimizers.md",
    "initial_design": "initial-designs.md",
    "ensemble_strategy": "ensembles.md",
    "loss": "losses.md",
}


@pytest.mark.parametrize("kind", sorted(PAGE_OF_KIND))
def test_every_built_in_is_documented(kind):
    text = (PAGES / PAGE_OF_KIND[kind]).read_text()
    built_in = [e.name for e in registry().entries(kind) if e.distribution == OWN_DISTRIBUTION]
    assert built_in
    missing = [name for name in built_in if f"`{name}`" not in text]
    assert not missing, f"{PAGE_OF_KIND[kind]} does not document {missing}"


def test_overview_lists_exactly_the_built_ins():
    rows = {}
    for line in (PAGES / "index.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 3 and cells[2].endswith(".md)"):
            rows[cells[0].replace(" ", "_")] = set(re.findall(r"`([^`]+)`", cells[1]))
    for kind in PAGE_OF_KIND:
        built_in = {e.name for e in registry().entries(kind) if e.distribution == OWN_DISTRIBUTION}
        assert rows[kind] == built_in, kind


def _documentation_of(text: str, name: str) -> str:
    """Where a page documents ``name``: its own section (heading to next heading), else
    its row of the page's table. A section may say it takes the options "of `other`"."""
    match = re.search(rf"^##+ `{re.escape(name)}`.*?(?=^##+ |\Z)", text, re.M | re.S)
    if not match:
        rows = [line for line in text.splitlines() if line.startswith(f"| `{name}` |")]
        return "\n".join(rows)
    section = match.group(0)
    for other in re.findall(r"those of `([^`]+)`", section):
        section += _documentation_of(text, other)
    return section


@pytest.mark.parametrize("kind", sorted(PAGE_OF_KIND))
def test_every_declared_option_is_documented_with_its_component(kind):
    from ensembo.factory_signatures import factory_options

    text = (PAGES / PAGE_OF_KIND[kind]).read_text()
    missing = {}
    for entry in registry().entries(kind):
        if entry.distribution != OWN_DISTRIBUTION:
            continue
        documentation = _documentation_of(text, entry.name)
        absent = [o for o in factory_options(entry.factory) or {} if f"`{o}`" not in documentation]
        if absent:
            missing[entry.name] = absent
    assert not missing, f"{PAGE_OF_KIND[kind]}: options not documented: {missing}"
