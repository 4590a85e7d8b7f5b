"""The ``ensembo`` command line.

Each subcommand lives in its own module with ``register(subparsers)`` (adds its parser
and sets ``handler``). User mistakes print one line and exit 2; nothing else exits 2.
Any other error (a bug, here or in a plugin) prints its type, message and notes and
exits 1. A plugin that breaks its contract while ensembo calls it (NaN predictions, a
wrong shape: a ``PluginContractError`` noted "while calling ...") is such a bug, not the
user's mistake. Every error is followed by its notes, one per line: they name the
component whose method raised. ``-v`` adds the full traceback, causes included. A
reader that closes the pipe (``| head``) ends the command quietly, as with other Unix
tools. Ctrl-C exits 130; SIGTERM (a batch system or container stopping the job) stops
the run the same way, so its trials' process groups are ended too, and exits 143. What
the stop leaves is each command's to say (``interrupt_note``, set with its handler).
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import traceback
import warnings
from collections.abc import Sequence

from ensembo import __version__, interrupts
from ensembo.attribution import CALL_NOTE
from ensembo.cli import bench_command, plugins_command, report_command, run_command, space_command
from ensembo.cli.exit_codes import (
    BROKEN_PIPE,
    INTERNAL_ERROR,
    INTERRUPTED,
    TERMINATED,
    USAGE_ERROR,
)
from ensembo.errors import EnsemboError, PluginContractError

COMMANDS = [plugins_command, run_command, report_command, bench_command, space_command]
PLUGIN_BUG = "a bug in the component named first above, not a mistake in the experiment"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ensembo", description="Sequential model-based ensemble optimization."
    )
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more log output")
    parser.add_argument("-q", "--quiet", action="store_true", help="only errors")
    parser.add_argument("--version", action="version", version=f"ensembo {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(subparsers)
    return parser


def _configure_logging(verbose: int, quiet: bool) -> None:
    level = logging.ERROR if quiet else logging.WARNING - 10 * min(verbose, 2)
    logging.basicConfig(level=level, format="%(levelname)s %(name)s: %(message)s",
                        handlers=[_stderr_handler(level)])
    if not verbose:  # -v keeps Python's format, with the file and line a bug report needs
        warnings.showwarning = _show_warning


def _stderr_handler(level: int) -> logging.Handler:
    """The level is the handler's, not only the root logger's: a library that sets its
    own logger's level (dask sets ``distributed`` to INFO) would otherwise print its
    INFO lines under ``-q`` too."""
    handler = logging.StreamHandler()
    handler.setLevel(level)
    return handler


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """A warning as one line a user reads, not the source line that raised it."""
    kind = "" if category is UserWarning else f"{category.__name__}: "
    print(f"ensembo: warning: {kind}{message}", file=file or sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    _configure_logging(args.verbose, args.quiet)
    with interrupts.sigterm_as_interrupt() as terminated:
        return _handle(args, terminated)


def _handle(args: argparse.Namespace, terminated: threading.Event) -> int:
    """Run the command; its errors become an exit status and a message. A command that
    catches the stop itself (bench) reads ``args.terminated`` to say which stop it was."""
    args.terminated = terminated
    try:
        code = int(args.handler(args) or 0)
        sys.stdout.flush()  # so a closed pipe shows here, not in Python's flush at exit
        if code == INTERRUPTED and terminated.is_set():  # a command that caught it (bench)
            return TERMINATED
        return code
    except BrokenPipeError:
        return _reader_gone()
    except EnsemboError as error:
        if _broke_contract_in_call(error):
            _report_unexpected(error, verbose=args.verbose, whose=PLUGIN_BUG)
            return INTERNAL_ERROR
        _report_mistake(error, verbose=args.verbose)
        return USAGE_ERROR
    except KeyboardInterrupt:
        return _stopped(args, terminated)
    except Exception as error:
        _report_unexpected(error, verbose=args.verbose)
        return INTERNAL_ERROR


def _stopped(args: argparse.Namespace, terminated: threading.Event) -> int:
    """Say the command was stopped, and what the stop left: the command's own
    ``interrupt_note(args)``, set where it is declared (``ensembo run``: "finished trials
    are saved"). A command without one runs no trials, and promises nothing."""
    what = "terminated (SIGTERM)" if terminated.is_set() else "interrupted"
    note_for = getattr(args, "interrupt_note", None)
    note = note_for(args) if note_for is not None else ""
    print(f"ensembo: {what}{f'; {note}' if note else ''}", file=sys.stderr)
    return TERMINATED if terminated.is_set() else INTERRUPTED


def _reader_gone() -> int:
    """Stop quietly once the reader of stdout has gone; stdout now writes to devnull so
    Python's flush at exit does not fail on the same pipe again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return BROKEN_PIPE


def _broke_contract_in_call(error: EnsemboError) -> bool:
    """A contract broken inside a call (a surrogate's NaN predictions) is the plugin's
    bug: the user cannot fix it in the experiment. One found while building a component
    (a misspelt option) is not noted this way, and stays the user's mistake."""
    notes = getattr(error, "__notes__", ())
    return isinstance(error, PluginContractError) and any(
        note.startswith(CALL_NOTE) for note in notes
    )


def _report_mistake(error: EnsemboError, *, verbose: int) -> None:
    """The message, then its notes: raised in a plugin's method, the message alone does
    not say whose (docs/plugin-authoring.md promises the note names it)."""
    if verbose:
        traceback.print_exception(error, file=sys.stderr)
    print(f"ensembo: error: {error}", file=sys.stderr)
    _print_notes(error)


def _report_unexpected(error: Exception, *, verbose: int, whose: str = "a bug") -> None:
    """A few lines by default — type, message and the notes that say where it happened
    (e.g. which plugin was being built) — and the traceback under ``-v``, which is what
    a bug report needs."""
    if verbose:
        traceback.print_exception(error, file=sys.stderr)
    print(f"ensembo: error: {type(error).__name__}: {error}", file=sys.stderr)
    _print_notes(error)
    if not verbose:
        print(f"ensembo: this looks like {whose}; run with -v to see the traceback",
              file=sys.stderr)


def _print_notes(error: BaseException) -> None:
    for note in getattr(error, "__notes__", ()):
        print(f"  {note}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
