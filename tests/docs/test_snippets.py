"""Code blocks marked ``<!-- tested -->`` in the documentation run as written.

The marked blocks of one page run in order in one namespace (a page may build on its
earlier blocks), in a temporary working directory.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from threadpoolctl import threadpool_limits

DOCS = Path(__file__).resolve().parents[2] / "docs"
EXAMPLE_SOURCE = DOCS / "examples" / "ensembo-plugin-example" / "src"
MARKED = re.compile(r"<!-- tested -->\s*```python\n(.*?)```", re.DOTALL)
PAGES = sorted(p for p in DOCS.rglob("*.md") if "tested -->" in p.read_text())


def test_some_pages_have_tested_snippets():
    assert {p.relative_to(DOCS).as_posix() for p in PAGES} >= {
        "index.md",
        "guide/study.md",
        "guide/ask-tell.md",
        "plugin-authoring.md",
    }


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(DOCS).as_posix())
def test_page_snippets_run(page, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(EXAMPLE_SOURCE))  # the plugin-author guide imports it
    blocks = MARKED.findall(page.read_text())
    assert blocks, f"{page}: marker without a python block"
    namespace: dict = {"__name__": "__docs__"}
    # One BLAS thread: on a loaded shared machine, threaded BLAS in the GP runs ~10x slower.
    with threadpool_limits(1):
        for number, block in enumerate(blocks, start=1):
            code = compile(block, f"{page.name} block {number}", "exec")
            exec(code, namespace)  # noqa: S102 - running our own documentation
