"""Registers the built-in library spaces (``spaces/library/*.yaml``) by name."""

from __future__ import annotations

from pathlib import Path

from ensembo.hookspecs import hookimpl

LIBRARY = Path(__file__).parent / "library"


@hookimpl
def ensembo_add_spaces():
    return {path.stem: (lambda path=path: path) for path in sorted(LIBRARY.glob("*.yaml"))}
