"""Write a report's files aside, then move them into the report folder together.

Written one by one in place, a report stopped halfway (Ctrl-C, a failing figure, a full
disk) left new files beside an earlier report's, and a file cut short. Staged, nothing
reaches the folder until every file is written; each is then moved in with
``os.replace`` (atomic: a file is the old one or the new one, never half of either), the
figures before the documents that link to them, with a Ctrl-C held until the last is
in. The folder itself is never replaced or
emptied, as it may hold the user's own files: an earlier report's file that this one
does not write (a figure it has no data or no matplotlib for) is left as it was.
A replaced file keeps its permissions (a ``chmod 600`` report stays private), and a
symbolic link in the folder (to a published copy, say) stays a link: the file it points
to is replaced, by a copy staged beside it and renamed over it.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

from ensembo import interrupts
from ensembo.errors import ExperimentError

STAGING_PREFIX = ".ensembo-report-"
DOCUMENTS = (".md",)  # moved in last: they link to the other files


@contextlib.contextmanager
def staged(out: Path) -> Iterator[Path]:
    """A fresh folder inside ``out`` (same file system, so the moves are renames) to
    write the report's files into; moved into ``out`` when the block ends without an
    error, removed with whatever it holds in every case."""
    out.mkdir(parents=True, exist_ok=True)
    stage = Path(tempfile.mkdtemp(prefix=STAGING_PREFIX, dir=out))
    try:
        yield stage
        for written in stage.iterdir():  # before anything moves: a report whole or not at all
            _check_link(out / written.name)
        with interrupts.deferred():  # a Ctrl-C while moving in waits for the last file
            for written in sorted(stage.iterdir(), key=lambda path: path.suffix in DOCUMENTS):
                _move_in(written, out / written.name)
    finally:
        shutil.rmtree(stage, ignore_errors=True)


def _check_link(target: Path) -> None:
    """A symbolic link in the folder must lead to a file, or to nothing in a folder that
    exists: found while moving in, a link to a folder, a dangling one or a loop left the
    figures new and the documents old, and was reported as a bug."""
    if not target.is_symlink():
        return
    try:
        resolved = target.resolve(strict=False)
    except (OSError, RuntimeError) as error:  # a loop
        raise ExperimentError(str(target), f"is a symbolic link that cannot be followed "
                              f"({error}); remove it or point it at a file") from None
    if resolved.exists() and not resolved.is_file():
        raise ExperimentError(str(target), f"is a symbolic link to {resolved}, which is not "
                              "a file; remove it or point it at a file")
    if not resolved.parent.is_dir():
        raise ExperimentError(str(target), f"is a symbolic link into {resolved.parent}, "
                              "which does not exist; remove it or point it at a file")


def _move_in(written: Path, target: Path) -> None:
    """Replace ``target`` with ``written`` atomically, keeping the target's mode; through
    a symbolic link, replace the file it resolves to (a copy of ``written`` is staged
    beside that file first, as it may be on another file system)."""
    if not target.is_symlink():
        _keep_mode(target, written)
        os.replace(written, target)
        return
    resolved = target.resolve()
    descriptor, name = tempfile.mkstemp(prefix=STAGING_PREFIX, dir=resolved.parent)
    os.close(descriptor)
    beside = Path(name)
    try:
        shutil.copyfile(written, beside)
        shutil.copymode(written, beside)  # mkstemp's 0600, as an unlinked target would be
        _keep_mode(resolved, beside)
        os.replace(beside, resolved)
    finally:
        beside.unlink(missing_ok=True)


def _keep_mode(target: Path, replacement: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        shutil.copymode(target, replacement)
