"""Write a file the bench makes in ``--out`` (a suite's ``report.md``) whole or not at all.

Written in place, a report stopped mid-write (Ctrl-C, SIGTERM, a full disk) was left cut
short, and a reader of a shared ``--out`` could read half of it. The text is written into
a staging folder beside it and moved over the old file with ``os.replace``
(:mod:`ensembo.report.staged_folder`, as ``ensembo report`` writes its reports), so the
file is the old one or the new one; its mode, and a symbolic link to it, are kept.

A folder the user may not create files in (a shared results folder) whose report the
user may write has no room for the staging folder: the report is then written in place,
as it was before staging, with a warning; where the report cannot be written either, the
error names it and its folder.
"""

from __future__ import annotations

import errno
import logging
import os
from pathlib import Path

from ensembo.errors import ExperimentError
from ensembo.report.staged_folder import staged

logger = logging.getLogger(__name__)

NO_NEW_FILES = (errno.EACCES, errno.EPERM, errno.EROFS)
"""Why a staging folder cannot be made in a folder that exists: no write permission, or
a read-only file system."""


def write_report(path: Path, text: str) -> Path:
    """Replace ``path`` with ``text`` atomically (its folder is made if missing)."""
    path = Path(path)
    staging = True
    try:
        with staged(path.parent) as stage:
            staging = False
            (stage / path.name).write_text(text, encoding="utf-8")
    except OSError as error:
        if not staging or error.errno not in NO_NEW_FILES or not path.parent.is_dir():
            raise
        _write_in_place(path, text, error)
    return path


def _write_in_place(path: Path, text: str, cannot_stage: OSError) -> None:
    """Write ``path`` over itself, not atomically, when its folder takes no new files."""
    why = cannot_stage.strerror or str(cannot_stage)
    if not (path.is_file() and os.access(path, os.W_OK)):
        raise ExperimentError(str(path), (
            f"cannot write it: its folder {path.parent} takes no new files ({why}), and "
            f"{path.name} is not a file there this user may write; make the folder "
            "writable or give another --out")) from cannot_stage
    logger.warning("%s takes no new files (%s): %s is written in place, not replaced "
                   "whole", path.parent, why, path.name)
    path.write_text(text, encoding="utf-8")
