"""Continue an archived ``ensembo bench ensembles`` run until a deadline, one block per core.

A session's processes die when it ends, and a block killed half way is lost: some
``eo-wide`` blocks take two hours. So this runs the open blocks lowest seed first and,
within a seed, longest first, and starts a block only if its expected wall time (the
longest landed block of that dataset, times ``--slack``) ends before ``--until``. That
lowers the loss; it cannot rule it out, since a block can run longer than any before.
After each block it rewrites the archive and commits it alone, so a landed block
survives the machine. Blocks another process runs on the same ``--out`` are waited for
on a core of their own and never started twice. Standard library only: it drives a
pinned install's ``ensembo`` executable and never imports the package it lives beside.

    python3 benchmarks/continue_blocks.py --ensembo VENV/bin/ensembo --experiment eo-wide \\
        --seeds 2,3,4 --budget 200 --out OUT --repo REPO --until 05:25
"""

from __future__ import annotations

import argparse
import datetime as dt
import fcntl
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

Block = tuple[int, str, str]  # (seed, space, dataset)
OPTIONS = ("--optimizers", "--seeds", "--problems", "--out")


def say(message: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {message}", flush=True)


def landed_times(out: Path, experiment: str, budget: int) -> dict[tuple[str, str, int], float]:
    """Wall seconds of every complete record of ``budget`` in ``out``, by (space, dataset,
    seed). A failed record, or one of another budget, is not landed: the harness runs
    that block again, and its wall time says nothing of a full block's."""
    times = {}
    for path in glob.glob(str(out / "ensembles" / experiment / "*" / "*" / "seed-*.json")):
        record = landed_record(Path(path), budget)
        if record is not None:
            times[(record["space"], record["dataset"], record["seed"])] = record["wall_seconds"]
    return times


def landed_record(path: Path, budget: int) -> dict | None:
    """The record at ``path`` if it is complete and of ``budget``, else None."""
    if not path.is_file():
        return None
    with open(path, encoding="utf-8") as handle:
        record = json.load(handle)
    landed = record.get("status") == "complete" and record.get("budget") == budget
    return record if landed else None


def expected_seconds(times: dict[tuple[str, str, int], float],
                     slack: float) -> dict[tuple[str, str], float]:
    """The longest landed wall time of each (space, dataset), times ``slack``: the median
    was exceeded by a quarter of the ``eo-wide`` blocks, by up to 6.4 times."""
    expected: dict[tuple[str, str], float] = {}
    for (space, dataset, _), seconds in times.items():
        expected[space, dataset] = max(expected.get((space, dataset), 0.0), seconds * slack)
    return expected


def open_blocks(problems: list[tuple[str, str]], seeds: list[int],
                times: dict[tuple[str, str, int], float],
                expected: dict[tuple[str, str], float]) -> list[Block]:
    """The blocks without a landed record: lowest seed first, then the longest expected
    first, so the long blocks start while there is time for them."""
    blocks = [(seed, space, dataset) for seed in seeds for space, dataset in problems
              if (space, dataset, seed) not in times]
    return sorted(blocks, key=lambda b: (b[0], -expected.get(b[1:], math.inf)))


def take_fitting(queue: list[Block], expected: dict[tuple[str, str], float],
                 seconds_left: float) -> Block | None:
    """Remove and return the first block of ``queue`` expected to end in ``seconds_left``
    (a dataset with no landed block is expected to take for ever)."""
    for block in queue:
        if expected.get(block[1:], math.inf) <= seconds_left:
            queue.remove(block)
            return block
    return None


def experiment_problems(ensembo: str, experiment: str) -> list[tuple[str, str]]:
    """The experiment's (space, dataset) pairs, as the pinned install defines them."""
    python = str(Path(shutil.which(ensembo) or ensembo).with_name("python"))
    code = ("import json, sys; from ensembo.bench.ensembles_experiments import EXPERIMENTS; "
            "e = EXPERIMENTS[sys.argv[1]]; print(json.dumps([list(e.spaces), list(e.datasets)]))")
    spaces, datasets = json.loads(subprocess.check_output([python, "-c", code, experiment]))
    return [(space, dataset) for space in spaces for dataset in datasets]


def command_options(args: list[str]) -> dict[str, str]:
    """The options of an ``ensembles`` command line that name its blocks, spelled
    ``--option value``, ``--option=value`` or abbreviated, as argparse takes them."""
    found = {}
    for i, token in enumerate(args):
        name, equals, value = token.partition("=")
        if not name.startswith("--") or len(name) < 4:
            continue
        full = [option for option in OPTIONS if option.startswith(name)]
        if len(full) == 1:
            found[full[0]] = value if equals else (args[i + 1] if i + 1 < len(args) else "")
    return found


def running_blocks(experiment: str, problems: list[tuple[str, str]],
                   out: Path) -> dict[int, Block]:
    """The blocks of ``experiment`` on ``out`` another ``ensembo bench ensembles`` process
    runs now, by pid. A process that runs more than one block (a whole seed, say) cannot
    be mapped to its blocks; then this refuses rather than risk running one twice."""
    spaces = sorted({space for space, _ in problems})
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            raw = Path(f"/proc/{pid}/cmdline").read_bytes()
            cwd = Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
        args = raw.decode(errors="replace").split("\0")
        if "ensembles" not in args:
            continue
        option = command_options(args)
        if (cwd / option.get("--out", ".")).resolve() != out.resolve():
            continue
        named = [item.partition(":") for item in option.get("--optimizers", "").split(",")]
        ours = [space for name, _, space in named if name == experiment]
        if not ours:
            continue
        seeds, dataset = option.get("--seeds", ""), option.get("--problems", "")
        first, _, last = seeds.partition("-")
        space = ours[0] or (spaces[0] if len(spaces) == 1 else "")
        if not (len(ours) == 1 and space and dataset and "," not in dataset
                and first == last and first.isdigit()):
            raise SystemExit(f"process {pid} runs {experiment} blocks this script cannot tell "
                             f"apart ({' '.join(args).strip()}); stop it or let it finish first")
        found[int(pid)] = (int(first), space, dataset)
    return found


def wait_for(pid: int) -> None:
    while os.path.exists(f"/proc/{pid}"):
        time.sleep(30)


def deadline(until: str | None, now: dt.datetime | None = None) -> float:
    """Epoch seconds of the next ``HH:MM`` (UTC), refused if more than 12 hours away (a
    time just past would otherwise mean tomorrow); no deadline without one."""
    if until is None:
        return math.inf
    now = now or dt.datetime.now(dt.UTC)
    try:
        end = dt.datetime.combine(now.date(), dt.time.fromisoformat(until), dt.UTC)
    except ValueError:
        raise SystemExit(f"--until {until!r} is not a time of day (HH:MM, UTC)") from None
    if end <= now:
        end += dt.timedelta(days=1)
    if end - now > dt.timedelta(hours=12):
        raise SystemExit(f"--until {until} is {(end - now).total_seconds() / 3600:.1f} hours "
                         "away; give a time within 12 hours (UTC)")
    return end.timestamp()


def git(repo: Path, *command: str, tries: int = 10) -> bool:
    """Run a git command, retrying while another git process (a session's own commit)
    holds a lock; a failure is said, never raised, so a worker keeps going."""
    for _ in range(tries):
        done = subprocess.run(["git", "-C", str(repo), *command], capture_output=True, text=True)
        if done.returncode == 0 or ".lock" not in done.stderr:
            break
        time.sleep(3)
    if done.returncode != 0:
        say(f"git {command[0]} failed: {(done.stderr or done.stdout).strip()}")
    return done.returncode == 0


class Runner:
    """The shared state of the worker threads: the queue, the deadline, the archive."""

    def __init__(self, args: argparse.Namespace, queue: list[Block],
                 expected: dict[tuple[str, str], float], end: float):
        self.args, self.queue, self.expected, self.end = args, queue, expected, end
        self.queue_lock, self.archive_lock = threading.Lock(), threading.Lock()
        self.retried: set[Block] = set()

    def landed(self, block: Block) -> bool:
        seed, space, dataset = block
        path = self.args.out / "ensembles" / self.args.experiment / space / dataset
        return landed_record(path / f"seed-{seed}.json", self.args.budget) is not None

    def settle(self, block: Block, how: str) -> None:
        """Archive a landed block; put a block that did not land back in the queue once."""
        if self.landed(block):
            self.archive_and_commit()
            return
        with self.queue_lock:
            again = block not in self.retried
            self.retried.add(block)
            if again:
                self.queue.insert(0, block)
        say(f"seed {block[0]} {block[1]}/{block[2]} did not land ({how})"
            + ("; queued once more" if again else "; left for another session"))

    def archive_and_commit(self) -> None:
        """Rewrite the archive from ``--out`` and commit that file alone."""
        if self.args.repo is None:
            return
        with self.archive_lock:
            times = landed_times(self.args.out, self.args.experiment, self.args.budget)
            seeds: dict[int, int] = {}
            for _, _, seed in times:
                seeds[seed] = seeds.get(seed, 0) + 1
            counts = "; ".join(f"seed {s}: {n}" for s, n in sorted(seeds.items()))
            archive = self.args.repo / "benchmarks" / "records" / f"{self.args.experiment}.tar.xz"
            partial = archive.with_name(f".{archive.name}.partial")
            packed = subprocess.run(["tar", "--sort=name", "--exclude=*.tmp", "-cJf",
                                     str(partial), f"ensembles/{self.args.experiment}"],
                                    cwd=self.args.out)
            if packed.returncode != 0:  # a full disk, say: keep the last good archive
                say(f"tar failed ({packed.returncode}); {archive} left as it was")
                partial.unlink(missing_ok=True)
                return
            partial.replace(archive)
            name = str(archive.relative_to(self.args.repo))
            if not git(self.args.repo, "add", "--", name):
                return
            staged = subprocess.run(["git", "-C", str(self.args.repo), "diff", "--cached",
                                     "--quiet", "--", name], capture_output=True)
            if staged.returncode != 0:  # the archive changed
                git(self.args.repo, "commit", "-q", "-m",
                    f"records: {self.args.experiment}, {len(times)} blocks ({counts})", "--",
                    name)

    def work(self, core: int, adopted: tuple[int, Block] | None) -> None:
        if adopted is not None:
            pid, block = adopted
            say(f"core {core}: waiting for process {pid} (seed {block[0]} {block[2]})")
            wait_for(pid)
            self.settle(block, f"process {pid} ended without a complete record")
        while True:
            with self.queue_lock:
                block = take_fitting(self.queue, self.expected, self.end - time.time())
            if block is None:
                break
            seed, space, dataset = block
            say(f"core {core}: seed {seed} {space}/{dataset}")
            done = subprocess.run(
                ["nice", "-n", "10", self.args.ensembo, "bench", "ensembles",
                 "--optimizers", f"{self.args.experiment}:{space}", "--problems", dataset,
                 "--seeds", f"{seed}-{seed}", "--budget", str(self.args.budget),
                 "--workers", "1", "--out", str(self.args.out), "--no-progress"],
                env={**os.environ, "OMP_NUM_THREADS": "1"}, check=False)
            self.settle(block, f"exit status {done.returncode}")
        say(f"core {core}: no open block fits before the deadline")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ensembo", required=True, help="the pinned install's ensembo")
    parser.add_argument("--experiment", required=True)
    parser.add_argument("--seeds", required=True, help="comma-separated, e.g. 2,3,4")
    parser.add_argument("--budget", type=int, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--repo", type=Path, help="commit the archive here after each block")
    parser.add_argument("--until", help="HH:MM UTC; start no block expected to end later")
    parser.add_argument("--cores", type=int, default=2)
    parser.add_argument("--slack", type=float, default=1.1)
    parser.add_argument("--dry-run", action="store_true", help="print the queue and stop")
    args = parser.parse_args(argv)
    args.out = args.out.resolve()
    end = deadline(args.until)
    lock = open(args.out / ".continue_blocks.lock", "w")  # noqa: SIM115 - held until exit
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SystemExit(f"another continue_blocks.py runs on {args.out}") from None
    times = landed_times(args.out, args.experiment, args.budget)
    expected = expected_seconds(times, args.slack)
    problems = experiment_problems(args.ensembo, args.experiment)
    running = running_blocks(args.experiment, problems, args.out)
    if len(running) > args.cores:
        raise SystemExit(f"{len(running)} blocks already run on {args.cores} cores")
    queue = [block for block in open_blocks(problems, [int(s) for s in args.seeds.split(",")],
                                             times, expected)
             if block not in running.values()]
    for pid, (seed, space, dataset) in running.items():
        say(f"already running (process {pid}): seed {seed} {space}/{dataset}")
    if end < math.inf:
        say(f"deadline {dt.datetime.fromtimestamp(end, dt.UTC):%Y-%m-%d %H:%M} UTC")
    if args.dry_run:
        for seed, space, dataset in queue:
            hours = expected.get((space, dataset), math.inf) / 3600
            print(f"seed {seed} {space}/{dataset}: expect {hours:.2f} h"
                  if hours < math.inf else f"seed {seed} {space}/{dataset}: no landed block")
        return 0
    runner = Runner(args, queue, expected, end)
    adopted: list[tuple[int, Block] | None] = list(running.items())
    adopted += [None] * (args.cores - len(adopted))
    cores = [threading.Thread(target=runner.work, args=(n, one)) for n, one in enumerate(adopted)]
    for thread in cores:
        thread.start()
    for thread in cores:
        thread.join()
    say(f"{len(queue)} blocks left")
    return 0


if __name__ == "__main__":
    sys.exit(main())
