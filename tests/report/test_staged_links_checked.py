"""A symbolic link in the report folder that does not lead to a file (a link to a folder,
a dangling one whose folder is gone, a loop) is refused, naming it, before any file is
moved in: found while moving in, it left the figures new and the documents old, and the
command called it a bug (review of the staged report)."""

from __future__ import annotations

import pytest

from ensembo.errors import ExperimentError
from ensembo.report.staged_folder import staged


def _dangling(root, link):
    link.symlink_to(root / "gone" / "report.md")


def _to_a_folder(root, link):
    (root / "folder").mkdir()
    link.symlink_to(root / "folder")


def _loop(root, link):
    link.symlink_to(link)


@pytest.mark.parametrize("make_link", [_dangling, _to_a_folder, _loop])
def test_a_link_that_leads_to_no_file_is_refused_before_anything_moves(tmp_path, make_link):
    out = tmp_path / "report"
    out.mkdir()
    (out / "a.png").write_text("earlier figure")
    make_link(tmp_path, out / "report.md")
    with pytest.raises(ExperimentError, match="report.md: is a symbolic link"), \
            staged(out) as stage:
        (stage / "a.png").write_text("new figure")
        (stage / "report.md").write_text("new report")
    assert (out / "a.png").read_text() == "earlier figure"
    assert [path.name for path in out.iterdir() if path.name.startswith(".")] == []
