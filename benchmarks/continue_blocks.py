"""Continue an archived ``ensembo bench ensembles`` run until a deadline, one block per core.

A session's processes die when it ends, and a block killed half way is lost: some
``eo-wide`` blocks take two hours. So this runs the open blocks lowest seed first and,
within a seed, longest first, and starts a block only if its expected wall time (the
median of that dataset's landed blocks, times ``--slack``) ends before ``--until``.
After each block it rewrites the archive and commits it alone, so a landed block
survives the machine. Blocks another process is running are waited for on a core of
their own and never started twice. Standard library only: it drives a pinned install's
``ensembo`` executable and never imports the package it lives beside.

    python3 benchmarks/continue_blocks.py --ensembo VENV/bin/ensembo --experiment eo-wide \\
        --seeds 2,3,4 --budget 200 --out OUT --repo REPO --until 05:25
"""

from __future__ import annotations

import argparse
import datetime as dt
import glob
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path


def landed_times(out: Path, experiment: str) -> dict[tuple[str, str, int], float]:
    """Wall seconds of every record already in ``out``, by (space, dataset, seed)."""
    times = {}
    for path in glob.glob(str(out / "ensembles" / experiment / "*" / "*" / "seed-*.json")):
        with open(path, encoding="utf-8") as handle:
            record = json.load(handle)
        times[(record["space"], record["dataset"], record["seed"])] = record["wall_seconds"]
    return times


def expected_seconds(times: dict[tuple[str, str, int], float],
                     slack: float) -> dict[tuple[str, str], float]:
    """Median landed wall time of each (space, dataset), times ``slack``."""
    by_problem: dict[tuple[str, str], list[float]] = {}
    for (space, dataset, _), seconds in times.items():
        by_problem.setdefault((space, dataset), []).append(seconds)
    return {problem: statistics.median(v) * slack for problem, v in by_problem.items()}


def open_blocks(problems: list[tuple[str, str]], seeds: list[int],
                times: dict[tuple[str, str, int], float],
                expected: dict[tuple[str, str], float]) -> list[tuple[int, str, str]]:
    """The (seed, space, dataset) blocks without a record: lowest seed first, then the
    longest expected first, so the long blocks start while there is time for them. A
    problem with no landed block counts as the longest known."""
    longest = max(expected.values(), default=0.0)
    blocks = [(seed, space, dataset) for seed in seeds for space, dataset in problems
              if (space, dataset, seed) not in times]
    return sorted(blocks, key=lambda b: (b[0], -expected.get(b[1:], longest)))


def take_fitting(queue: list[tuple[int, str, str]], expected: dict[tuple[str, str], float],
                 seconds_left: float) -> tuple[int, str, str] | None:
    """Remove and return the first block of ``queue`` expected to end in ``seconds_left``."""
    longest = max(expected.values(), default=0.0)
    for block in queue:
        if expected.get(block[1:], longest) <= seconds_left:
            queue.remove(block)
            return block
    return None


def experiment_problems(ensembo: str, experiment: str) -> list[tuple[str, str]]:
    """The experiment's (space, dataset) pairs, as the pinned install defines them."""
    python = str(Path(ensembo).with_name("python"))
    code = ("import json, sys; from ensembo.bench.ensembles_experiments import EXPERIMENTS; "
            "e = EXPERIMENTS[sys.argv[1]]; print(json.dumps([list(e.spaces), list(e.datasets)]))")
    spaces, datasets = json.loads(subprocess.check_output([python, "-c", code, experiment]))
    return [(space, dataset) for space in spaces for dataset in datasets]


def running_blocks(experiment: str, problems: list[tuple[str, str]],
                   out: Path) -> dict[int, tuple]:
    """The blocks of ``experiment`` another ``ensembo bench ensembles`` process runs now,
    by pid, so they are neither started twice nor left without a core. A process that
    runs more than one block (a whole seed, say) cannot be mapped to its blocks; then
    this refuses rather than risk running one of them twice."""
    spaces = sorted({space for space, _ in problems})
    found = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        except OSError:
            continue
        if "ensembles" not in args or "--optimizers" not in args:
            continue
        option = dict(zip(args, args[1:], strict=False))
        name, _, space = option["--optimizers"].partition(":")
        if name != experiment or Path(option.get("--out", "")).resolve() != out.resolve():
            continue
        seeds, dataset = option.get("--seeds", ""), option.get("--problems", "")
        first, _, last = seeds.partition("-")
        space = space or (spaces[0] if len(spaces) == 1 else "")
        if not (space and dataset and "," not in dataset and first == last and first.isdigit()):
            raise SystemExit(f"process {pid} runs {experiment} blocks this script cannot tell "
                             f"apart ({' '.join(args).strip()}); stop it or let it finish first")
        found[int(pid)] = (int(first), space, dataset)
    return found


def wait_for(pid: int) -> None:
    while os.path.exists(f"/proc/{pid}"):
        time.sleep(30)


def deadline(until: str | None) -> float:
    """Epoch seconds of the next ``HH:MM`` (UTC); no deadline without one."""
    if until is None:
        return float("inf")
    now = dt.datetime.now(dt.UTC)
    hour, minute = (int(part) for part in until.split(":"))
    end = now.replace(hour=hour, minute=minute, second=0, microsecond=0)
    if end <= now:
        end += dt.timedelta(days=1)
    return end.timestamp()


def archive_and_commit(args: argparse.Namespace, lock: threading.Lock) -> None:
    """Rewrite the archive from ``--out`` and commit that file alone."""
    with lock:
        times = landed_times(args.out, args.experiment)
        seeds: dict[int, int] = {}
        for _, _, seed in times:
            seeds[seed] = seeds.get(seed, 0) + 1
        counts = "; ".join(f"seed {s}: {n}" for s, n in sorted(seeds.items()))
        archive = args.repo / "benchmarks" / "records" / f"{args.experiment}.tar.xz"
        partial = archive.with_name(archive.name + ".partial")
        packed = subprocess.run(["tar", "--sort=name", "-cJf", str(partial),
                                 f"ensembles/{args.experiment}"], cwd=args.out)
        if packed.returncode != 0:  # a full disk, say: keep the last good archive
            print(f"tar failed ({packed.returncode}); {archive} left as it was", flush=True)
            partial.unlink(missing_ok=True)
            return
        partial.replace(archive)
        name = str(archive.relative_to(args.repo))
        git(args.repo, "add", "--", name)
        git(args.repo, "commit", "-q", "-m",
            f"records: {args.experiment}, {len(times)} blocks ({counts})", "--", name)


def git(repo: Path, *command: str, tries: int = 10) -> None:
    """Run a git command, retrying while another git process (a session's own commit)
    holds the index lock; a failure is said, never raised, so a worker keeps going."""
    for _ in range(tries):
        done = subprocess.run(["git", "-C", str(repo), *command], capture_output=True, text=True)
        if done.returncode == 0 or "index.lock" not in done.stderr:
            break
        time.sleep(3)
    if done.returncode != 0 and "nothing" not in done.stdout + done.stderr:
        print(f"git {command[0]} failed: {done.stderr.strip()}", flush=True)


def work(core: int, queue: list, expected: dict, args: argparse.Namespace,
         end: float, lock: threading.Lock, adopted: int | None) -> None:
    if adopted is not None:
        print(f"{time.strftime('%H:%M:%S')} core {core}: waiting for process {adopted}",
              flush=True)
        wait_for(adopted)
        if args.repo is not None:
            archive_and_commit(args, lock)
    while True:
        with lock:
            block = take_fitting(queue, expected, end - time.time())
        if block is None:
            break
        seed, space, dataset = block
        print(f"{time.strftime('%H:%M:%S')} core {core}: seed {seed} {space}/{dataset}",
              flush=True)
        subprocess.run(["nice", "-n", "10", args.ensembo, "bench", "ensembles",
                        "--optimizers", f"{args.experiment}:{space}", "--problems", dataset,
                        "--seeds", f"{seed}-{seed}", "--budget", str(args.budget),
                        "--workers", "1", "--out", str(args.out), "--no-progress"],
                       env={**os.environ, "OMP_NUM_THREADS": "1"}, check=False)
        if args.repo is not None:
            archive_and_commit(args, lock)
    print(f"{time.strftime('%H:%M:%S')} core {core}: no open block fits before the deadline",
          flush=True)


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
    parser.add_argument("--slack", type=float, default=1.25)
    parser.add_argument("--dry-run", action="store_true", help="print the queue and stop")
    args = parser.parse_args(argv)
    times = landed_times(args.out, args.experiment)
    expected = expected_seconds(times, args.slack)
    problems = experiment_problems(args.ensembo, args.experiment)
    running = running_blocks(args.experiment, problems, args.out)
    queue = [block for block in open_blocks(problems, [int(s) for s in args.seeds.split(",")],
                                             times, expected)
             if block not in running.values()]
    for pid, (seed, space, dataset) in running.items():
        print(f"already running (process {pid}): seed {seed} {space}/{dataset}")
    if len(running) > args.cores:
        raise SystemExit(f"{len(running)} blocks already run on {args.cores} cores")
    if args.dry_run:
        for seed, space, dataset in queue:
            hours = expected.get((space, dataset), float("nan")) / 3600
            print(f"seed {seed} {space}/{dataset}: expect {hours:.2f} h")
        return 0
    end, lock = deadline(args.until), threading.Lock()
    adopted = list(running) + [None] * (args.cores - len(running))
    cores = [threading.Thread(target=work, args=(n, queue, expected, args, end, lock, pid))
             for n, pid in enumerate(adopted)]
    for thread in cores:
        thread.start()
    for thread in cores:
        thread.join()
    print(f"{len(queue)} blocks left", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
