"""A report that fails or is stopped leaves its folder as it was: its files are written
aside and moved in together, never one by one over the earlier report's."""

from __future__ import annotations

import numpy as np
import pytest

from ensembo.report import write
from ensembo.report.staged_folder import STAGING_PREFIX
from ensembo.report.write import write_benchmark_report, write_study_report

EARLIER = {"report.md": "earlier report\n", "trials.md": "earlier trials\n",
           "trials.csv": "earlier,csv\n"}


def _earlier_report(out):
    out.mkdir()
    for name, text in EARLIER.items():
        (out / name).write_text(text)
    (out / "my notes.txt").write_text("the user's own file\n")


def _contents(out):
    return {path.name: path.read_text() for path in out.iterdir()}


def test_a_report_failing_halfway_leaves_the_earlier_report_whole(stored_study, tmp_path,
                                                                 monkeypatch):
    """Written in place, trials.md and trials.csv were already the new report's while
    report.md was still the earlier one's."""
    out = tmp_path / "report"
    _earlier_report(out)

    def fails(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(write, "summary_markdown", fails)  # report.md comes last
    with pytest.raises(KeyboardInterrupt):
        write_study_report(stored_study[0], out, plots=False)
    assert _contents(out) == {**EARLIER, "my notes.txt": "the user's own file\n"}


def test_a_finished_report_replaces_its_files_and_keeps_the_others(stored_study, tmp_path):
    out = tmp_path / "report"
    _earlier_report(out)
    written = write_study_report(stored_study[0], out, plots=False)
    assert written == [out / "report.md", out / "trials.md", out / "trials.csv"]
    contents = _contents(out)
    assert sorted(contents) == ["my notes.txt", "report.md", "trials.csv", "trials.md"]
    assert contents["my notes.txt"] == "the user's own file\n"
    assert not any(text == EARLIER.get(name) for name, text in contents.items())
    assert not any(path.name.startswith(STAGING_PREFIX) for path in tmp_path.rglob("*"))


def test_a_ranking_failing_after_its_diagram_keeps_the_earlier_diagram(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib")
    rng = np.random.default_rng(1)
    lines = ["problem,method,loss"] + [f"p{p},{m},{rng.normal() + offset}" for p in range(6)
                                       for m, offset in (("a", 0), ("b", 1), ("c", 2))]
    (tmp_path / "results.csv").write_text("\n".join(lines) + "\n")
    out = tmp_path / "ranks"
    out.mkdir()
    (out / "critical_difference.png").write_bytes(b"earlier figure")
    (out / "ranks.md").write_text("earlier ranks\n")

    def fails(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(write, "markdown_table", fails)  # after the diagram, before ranks.md
    with pytest.raises(OSError, match="No space"):
        write_benchmark_report(tmp_path / "results.csv", out)
    assert (out / "critical_difference.png").read_bytes() == b"earlier figure"  # was a new PNG
    assert sorted(path.name for path in out.iterdir()) == ["critical_difference.png",
                                                          "ranks.md"]


def _ranked_results(tmp_path):
    rng = np.random.default_rng(1)
    lines = ["problem,method,loss"] + [f"p{p},{m},{rng.normal() + offset}" for p in range(6)
                                       for m, offset in (("a", 0), ("b", 1), ("c", 2))]
    (tmp_path / "results.csv").write_text("\n".join(lines) + "\n")
    return tmp_path / "results.csv"


def test_a_replaced_file_keeps_its_mode(tmp_path):
    """A user's chmod 600 ranks.md became 644 (the staged file's mode) on a rerun."""
    import os
    import stat

    results, out = _ranked_results(tmp_path), tmp_path / "ranks"
    write_benchmark_report(results, out, plots=False)
    (out / "ranks.md").chmod(0o600)
    umask = os.umask(0o022)
    try:
        write_benchmark_report(results, out, plots=False)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((out / "ranks.md").stat().st_mode) == 0o600  # was 0o644


def test_a_symlinked_file_stays_a_link_and_its_target_is_replaced(tmp_path):
    """The link in --out became a regular file, and the published copy it pointed to
    kept the stale report (the reports before staging wrote through the link)."""
    results, out, published = _ranked_results(tmp_path), tmp_path / "ranks", tmp_path / "pub"
    published.mkdir()
    (published / "ranks.md").write_text("stale\n")
    (published / "ranks.md").chmod(0o640)
    out.mkdir()
    (out / "ranks.md").symlink_to("../pub/ranks.md")
    write_benchmark_report(results, out, plots=False)
    assert (out / "ranks.md").is_symlink()
    assert (published / "ranks.md").read_text().startswith("# Ranks over 6 problems")
    assert ((published / "ranks.md").stat().st_mode & 0o777) == 0o640
    assert sorted(path.name for path in published.iterdir()) == ["ranks.md"]  # no leftovers
