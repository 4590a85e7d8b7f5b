"""The documentation site builds with zero warnings (``mkdocs build --strict``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")

ROOT = Path(__file__).resolve().parents[2]


def test_docs_build_strict(tmp_path):
    finished = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(tmp_path / "site"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert "WARNING" not in finished.stderr
    assert (tmp_path / "site" / "plugin-authoring" / "index.html").is_file()


def test_every_page_is_in_the_navigation():
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())

    def pages(entries):
        for entry in entries:
            for value in entry.values():
                yield from pages(value) if isinstance(value, list) else [value]

    in_nav = set(pages(config["nav"]))
    docs = ROOT / "docs"
    mine = [
        p.relative_to(docs).as_posix()
        for folder in ("guide", "plugins")
        for p in (docs / folder).glob("*.md")
    ] + ["index.md", "plugin-authoring.md", "architecture.md"]
    assert sorted(set(mine) - in_nav) == []
