"""Write the files the bench makes in ``--out`` (a suite's ``report.md``, its convergence
plots) whole or not at all.

Written in place, a report stopped mid-write (Ctrl-C, SIGTERM, a full disk) was left cut
short, and a reader of a shared ``--out`` could read half of it. The files are written
into a staging folder beside them and moved over the old ones with ``os.replace``
(:mod:`ensembo.report.staged_folder`, as ``ensembo report`` writes its reports), so each
file is the old one or the new one; its mode, and a symbolic link to it, are kept.

A folder the user may not create files in (a shared results folder) whose files the user
may write has no room for the staging folder: the files are then written in place, as
they were before staging, with a warning; where one cannot be written either, the error
names it and its folder, before any is written.
"""

from __future__ import annotations

import errno
import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path

from ensembo.errors import ExperimentError
from ensembo.report.staged_folder import staged

logger = logging.getLogger(__name__)

NO_NEW_FILES = (errno.EACCES, errno.EPERM, errno.EROFS)
"""Why a staging folder cannot be made in a folder that exists: no write permission, or
a read-only file system."""

Writer = Callable[[Path], object]
"""Writes one file's content to the path it is given."""


def write_report(path: Path, text: str) -> Path:
    """Replace ``path`` with ``text`` atomically (its folder is made if missing)."""
    path = Path(path)
    write_files(path.parent, {path.name: lambda target: target.write_text(
        text, encoding="utf-8")})
    return path


def write_files(folder: Path, writers: Mapping[str, Writer]) -> None:
    """Write each named file of ``folder`` with its writer, all moved in together when
    every one is whole (``folder`` is made if missing)."""
    folder = Path(folder)
    staging = True
    try:
        with staged(folder) as stage:
            staging = False
            for name, write in writers.items():
                write(stage / name)
    except OSError as error:
        if not staging or error.errno not in NO_NEW_FILES or not folder.is_dir():
            raise
        _write_in_place(folder, writers, error)


def _write_in_place(folder: Path, writers: Mapping[str, Writer],
                    cannot_stage: OSError) -> None:
    """Write the files over themselves, not atomically, when their folder takes no new
    files; none is written unless every one is a file this user may write."""
    why = cannot_stage.strerror or str(cannot_stage)
    for name in writers:
        path = folder / name
        if not (path.is_file() and os.access(path, os.W_OK)):
            raise ExperimentError(str(path), (
                f"cannot write it: its folder {folder} takes no new files ({why}), and "
                f"{name} is not a file there this user may write; make the folder "
                "writable or give another --out")) from cannot_stage
    for name, write in writers.items():
        logger.warning("%s takes no new files (%s): %s is written in place, not replaced "
                       "whole", folder, why, name)
        write(folder / name)
