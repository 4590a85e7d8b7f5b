"""One process at a time per benchmark run, across invocations sharing an ``--out``.

A run is claimed by an exclusive ``flock`` on a sidecar file next to its record
(``seed-0.json.claim``), taken without waiting: the lock is the check, so two invocations
started together cannot both see the run free and both run it. The kernel drops the lock
when its process dies, so the claim of a killed run is free again at once (no pid to
check, none to be reused). The holder deletes the sidecar while it still holds the lock;
a claimant that locked a sidecar deleted meanwhile sees that it is no longer the file at
the path and tries again, so two claimants never hold two different files.
``fcntl`` exists on POSIX only; elsewhere, and on a mount that cannot lock (NFS without
lockd), every claim succeeds and invocations sharing an ``--out`` are not kept apart.
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

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None

logger = logging.getLogger(__name__)

CLAIM_SUFFIX = ".claim"


def claim_path(record: Path) -> Path:
    """The sidecar file whose lock claims the run recorded in ``record``."""
    return record.with_name(record.name + CLAIM_SUFFIX)


@contextlib.contextmanager
def claimed(record: Path) -> Iterator[bool]:
    """True inside the block while this process holds the claim on ``record``'s run;
    False when another process holds it (the block must then leave the run alone)."""
    sidecar = claim_path(Path(record))
    held, handle = _lock(sidecar)
    try:
        yield held
    finally:
        if handle is not None:
            _release(sidecar, handle)


def _lock(sidecar: Path) -> tuple[bool, IO[str] | None]:
    """``(True, handle)`` once locked, ``(False, None)`` when another process holds the
    claim, ``(True, None)`` where nothing can be locked."""
    if fcntl is None:
        return True, None
    sidecar.parent.mkdir(parents=True, exist_ok=True)
    while True:
        handle = open(sidecar, "a+", encoding="utf-8")  # noqa: SIM115 (held while the run runs)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False, None
        except OSError as error:
            handle.close()
            logger.warning("%s: cannot lock the run's claim (%s); another invocation sharing "
                           "--out may run it too", sidecar, error.strerror or error)
            return True, None
        if _is_the_file_at(sidecar, handle):
            break
        handle.close()  # its holder finished and deleted it after we opened it: try anew
    handle.truncate(0)
    handle.write(f"pid {os.getpid()} on {socket.gethostname()} since "
                 f"{time.strftime('%Y-%m-%d %H:%M:%S')}\n")
    handle.flush()
    return True, handle


def _is_the_file_at(sidecar: Path, handle: IO[str]) -> bool:
    try:
        at_path = os.stat(sidecar)
    except FileNotFoundError:
        return False
    opened = os.fstat(handle.fileno())
    return (opened.st_dev, opened.st_ino) == (at_path.st_dev, at_path.st_ino)


def _release(sidecar: Path, handle: IO[str]) -> None:
    """Delete the sidecar while still locked (see the module's docstring), then unlock."""
    try:
        with contextlib.suppress(FileNotFoundError):
            sidecar.unlink()
    finally:
        handle.close()
