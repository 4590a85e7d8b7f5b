"""One process at a time per benchmark run, across invocations sharing an ``--out``.

A run is claimed by an exclusive ``flock`` on a sidecar file next to its record
(``seed-0.json.claim``), taken without waiting: the lock is the check, so two invocations
started together cannot both see the run free and both run it. The kernel drops the lock
when its process dies, so the claim of a killed run is free again at once (no pid to
check, none to be reused). The holder deletes the sidecar while it still holds the lock;
a claimant that locked a sidecar deleted meanwhile sees that it is no longer the file at
the path and tries again, so two claimants never hold two different files.
A claim file another user made (a group-writable ``--out`` shared by several users) is
locked through a read-only handle: ``flock`` needs none for writing.
``fcntl`` exists on POSIX only; elsewhere, and where a claim cannot be locked (a warning
names it), every claim succeeds and invocations sharing an ``--out`` are not kept apart:
:class:`Claim` then says the claim is no lock. On NFS mounted with ``nolock``, locks are
local to one host: invocations on different hosts are not kept apart, and nothing warns.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import attrs

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

logger = logging.getLogger(__name__)

CLAIM_SUFFIX = ".claim"


def claim_path(record: Path) -> Path:
    """The sidecar file whose lock claims the run recorded in ``record``."""
    return record.with_name(record.name + CLAIM_SUFFIX)


@attrs.frozen
class Claim:
    """``held``: this process may run the run (false when another process holds its
    claim); ``locked``: the claim is a real lock, so no other process holds it meanwhile
    (false where nothing could be locked: then only a ``running`` marker tells)."""

    held: bool
    locked: bool


@contextlib.contextmanager
def claim(record: Path) -> Iterator[Claim]:
    """The claim on ``record``'s run, held by this process inside the block unless
    another process holds it (the block must then leave the run alone)."""
    sidecar = claim_path(Path(record))
    taken, handle = _lock(sidecar)
    try:
        yield taken
    finally:
        if handle is not None:
            _release(sidecar, handle)


def _lock(sidecar: Path) -> tuple[Claim, IO[str] | None]:
    """The claim, with the locked handle when it is a lock held here."""
    if fcntl is None:
        return Claim(held=True, locked=False), None
    while True:
        try:
            handle, writable = _open(sidecar)
        except OSError as error:
            return _cannot_lock(sidecar, error), None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return Claim(held=False, locked=True), None
        except OSError as error:
            handle.close()
            return _cannot_lock(sidecar, error), None
        if _is_the_file_at(sidecar, handle):
            break
        handle.close()  # its holder finished and deleted it after we opened it: try anew
    if writable:
        handle.truncate(0)
        handle.write(f"pid {os.getpid()} on {socket.gethostname()} since "
                     f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n")
        handle.flush()
    return Claim(held=True, locked=True), handle


def _open(sidecar: Path) -> tuple[IO[str], bool]:
    """The sidecar opened for writing (made if missing, as any file: ``0o666`` less the
    umask) or, when it is another user's, read-only; and whether it is writable."""
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    try:
        descriptor = os.open(sidecar, os.O_RDWR | os.O_CREAT, 0o666)
    except PermissionError as denied:
        try:
            return open(sidecar, encoding="utf-8"), False  # noqa: SIM115 (held while running)
        except FileNotFoundError:
            raise denied from None  # no claim file, and none may be made here
    return os.fdopen(descriptor, "r+", encoding="utf-8"), True


def _cannot_lock(sidecar: Path, error: OSError) -> Claim:
    logger.warning("%s: cannot lock the run's claim (%s); another invocation sharing "
                   "--out may run it too", sidecar, error.strerror or error)
    return Claim(held=True, locked=False)


def _is_the_file_at(sidecar: Path, handle: IO[str]) -> bool:
    try:
        at_path = os.stat(sidecar)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle.fileno())
    return (opened.st_dev, opened.st_ino) == (at_path.st_dev, at_path.st_ino)


def _release(sidecar: Path, handle: IO[str]) -> None:
    """Delete the sidecar while still locked (see the module's docstring), then unlock.
    Another user's sidecar in a folder this user may not delete from stays: its lock
    goes all the same."""
    try:
        with contextlib.suppress(FileNotFoundError, PermissionError):
            os.unlink(sidecar)
    finally:
        handle.close()
