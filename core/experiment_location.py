"""Where ``ensembo resume`` finds a stored study's experiment folder (its objective's
module, its relative space file and dataset paths).

``ensembo run`` records the experiment folder and the study file's folder, both
absolute. A study file copied or moved with its project since is resumed with the
folder at the same place relative to it: the recorded folder is the original
project's (a copy ran the original's objective) or gone (a moved project could not
import its objective). A study file copied alone (a backup) keeps the recorded folder
when only that one holds the objective's module. A study recorded before the study
file's folder was kept resumes from the recorded experiment folder, as it did.
"""

from __future__ import annotations

import importlib.machinery
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

logger = logging.getLogger(__name__)

EXPERIMENT_DIR = "experiment_dir"
STUDY_DIR = "study_dir"


def recorded_location(experiment_dir: Path, study_file: Path | None) -> dict[str, str]:
    """The metadata entries ``ensembo run`` stores with a study; a study kept in memory
    has no file to be moved, so only the experiment folder is recorded."""
    location = {EXPERIMENT_DIR: str(experiment_dir)}
    if study_file is not None:
        location[STUDY_DIR] = str(Path(study_file).resolve().parent)
    return location


@attrs.frozen
class ExperimentFolder:
    """The folder a resume uses, and every folder it considered (to name them all
    when the objective cannot be imported from any)."""

    path: Path
    searched: tuple[Path, ...]

    def not_found_hint(self, study_file: Path) -> str:
        """The way on when the objective's module is in none of the searched folders."""
        hint = (
            f"if the project has moved, 'ensembo run EXPERIMENT.yaml --storage {study_file}' "
            "continues this study from the experiment file's folder"
        )
        if any(folder.is_dir() for folder in self.searched):
            return hint
        folders = " or ".join(str(folder) for folder in self.searched)
        return f"the experiment folder {folders} no longer exists; {hint}"


def experiment_folder(
    metadata: Mapping[str, Any], study_file: Path, module_name: str | None = None,
    files: Sequence[str] = (),
) -> ExperimentFolder:
    """The experiment folder of the study in ``study_file``: the recorded one while the
    study file is where ``ensembo run`` left it; once it has been moved or copied, the
    folder at the same place relative to it, else the recorded one (a notice names the
    folder used). With the objective's ``module_name``, a folder that holds that module
    comes first: a study file copied alone (a backup) still finds its project; so does
    one holding the experiment's relative ``files`` (a dataset, a space file). With
    neither to tell them apart, the recorded folder comes first while it exists."""
    recorded = Path(metadata.get(EXPERIMENT_DIR, ".")).resolve()
    study_dir = metadata.get(STUDY_DIR)
    here = Path(study_file).resolve().parent
    if study_dir is None or _same_folder(Path(study_dir), here):
        return ExperimentFolder(recorded, (recorded,))
    try:
        relative = os.path.relpath(recorded, study_dir)
    except ValueError:  # another drive (Windows): no relative place
        return ExperimentFolder(recorded, (recorded,))
    beside = Path(os.path.normpath(here / relative))
    searched = tuple(dict.fromkeys((beside, recorded)))
    existing = [folder for folder in searched if folder.is_dir()]
    if not existing:
        return ExperimentFolder(beside, searched)
    if module_name is None and not files and recorded in existing:
        # nothing tells a backup from a copied project: the recorded one, as before
        existing = [recorded, *(folder for folder in existing if folder != recorded)]
    holding = [folder for folder in existing if _holds(folder, module_name, files)]
    chosen = (holding or existing)[0]
    if chosen == beside:
        why = "at the same place relative to it"
    elif not beside.is_dir():
        why = f"the one 'ensembo run' recorded; there is no {beside}"
    elif module_name is None and not files:
        why = "the one 'ensembo run' recorded, which still exists"
    else:
        lacks = [f"module {_top(module_name)!r}"] if module_name is not None else []
        lacks += [repr(name) for name in files]
        why = (f"the one 'ensembo run' recorded; {beside}, at the same place relative to "
               f"the study file, lacks {' or '.join(lacks)}")
    logger.warning(
        "the study file %s was moved or copied from %s; using the experiment folder %s (%s)",
        study_file, study_dir, chosen, why,
    )
    return ExperimentFolder(chosen, searched)


def _holds(folder: Path, module_name: str | None, files: Sequence[str]) -> bool:
    """``folder`` holds the objective's module (or its package) and the relative files."""
    if module_name is not None and importlib.machinery.PathFinder.find_spec(
            _top(module_name), [str(folder)]) is None:
        return False
    return all((folder / name).exists() for name in files)


def relative_files(document: Any) -> tuple[str, ...]:
    """The files an experiment names relative to its folder: a space file, a dataset
    file (a name with a suffix; ``breast-cancer`` and ``keel:NAME`` are bundled)."""
    if not isinstance(document, Mapping):
        return ()
    data = document.get("data")
    named = [document.get("space"), data.get("dataset") if isinstance(data, Mapping) else None]
    return tuple(
        name for name in named
        if isinstance(name, str) and Path(name).suffix and ":" not in name
        and not Path(name).is_absolute()
    )


def _top(module_name: str | None) -> str:
    return str(module_name).partition(".")[0]


def _same_folder(recorded: Path, here: Path) -> bool:
    """The same folder, also under another spelling (a symlink, a mount)."""
    if recorded == here:
        return True
    try:
        return os.path.samefile(recorded, here)
    except OSError:  # the recorded folder is gone
        return False
