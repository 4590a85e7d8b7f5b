"""Experiment files: a YAML (or JSON) document describing one study to run.

```yaml
space: svm                     # library name, path, or an inline space definition
objective: mypkg.tasks:loss    # importable function config -> loss
surrogate: gp                  # or {name: gp, kernel: laplace}; null = random search
ensemble: best
budget: 50                     # number of trials
seed: 0
storage: runs/svm.db           # optional; relative to the experiment file
execution: {n_jobs: 4, trial_timeout: 600}   # optional; see ensembo.execution.settings
enqueue:                       # optional; configurations to evaluate first (the rest at defaults)
  - {classifier: svm, "classifier:svm:C": 10.0}
```
Every key is checked; an unknown key is an :class:`ExperimentError` naming it.
"""

from __future__ import annotations

import difflib
import importlib
import logging
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs
import yaml

from ensembo import checks
from ensembo.errors import ExperimentError, SpaceError, StorageError
from ensembo.execution.settings import ExecutionSettings
from ensembo.spaces.document import utf8_text
from ensembo.storage import keeps_in_memory

logger = logging.getLogger(__name__)

_COMPONENT_KEYS = (
    "surrogate",
    "acquisition",
    "acquisition_optimizer",
    "initial_design",
    "ensemble",
)
_KEYS = {
    "name", "space", "objective", "budget", "seed", "storage", "timeout", "n_initial", "loss",
    "data",
    "execution",
    "enqueue",
    *_COMPONENT_KEYS,
}
_REQUIRED = ("space", "objective", "budget")
# An experiment with ``data:`` (see ensembo.ml.data_run) tunes a learner: no objective.
_DATA_KEY = "data"


@attrs.frozen(kw_only=True)
class Experiment:
    """A validated experiment; ``source`` is the document as written, for storage.
    ``label`` (the file's stem) names an inline space that has no ``name`` of its own."""

    source: dict[str, Any] = attrs.field(eq=False)
    base_dir: Path
    label: str = ""
    # space paths read from the current directory and warned of, to warn once
    _warned: set[str] = attrs.field(factory=set, eq=False, repr=False, init=False)

    @property
    def budget(self) -> int:
        return int(self.source["budget"])

    @property
    def seed(self) -> int:
        return int(self.source.get("seed", 0))

    @property
    def timeout(self) -> float | None:
        value = self.source.get("timeout")
        return None if value is None else float(value)

    @property
    def execution(self) -> ExecutionSettings:
        """Where trials run (``execution:`` key); serial when absent."""
        return ExecutionSettings.from_document(self.source.get("execution"))

    def storage_path(self, override: str | None = None) -> Path | None:
        """The study file: ``--storage`` as given, else ``storage:`` relative to the
        experiment file. A folder is refused naming the option or key that gave it
        (``Path`` drops a trailing slash: ``--storage runs/`` made a file ``runs``).
        SQLite's spellings are read as ``Study(storage=...)`` reads them: ``:memory:``
        and ``sqlite://`` keep the study in memory (None), ``sqlite:///PATH`` is PATH
        (they made a file ``:memory:``, a folder ``sqlite:``, or were called a folder)."""
        raw = override or self.source.get("storage")
        if raw is None or keeps_in_memory(raw):
            return None
        path = Path(raw.removeprefix("sqlite:///")).expanduser()  # as storage._path reads it
        if not override and not path.is_absolute():
            path = self.base_dir / path
        if raw.endswith(("/", os.sep)) or path.is_dir():
            problem = f"names a folder ({path}); give a file path such as runs/study.db"
            if override:
                raise StorageError(f"--storage {raw}: {problem}")
            raise ExperimentError("storage", f"{raw} {problem}")
        return path

    def study_options(self) -> dict[str, Any]:
        """Keyword arguments for :class:`ensembo.Study` from the component keys."""
        options = {k: self.source[k] for k in _COMPONENT_KEYS if k in self.source}
        for key in ("n_initial", "loss"):
            if key in self.source:
                options[key] = self.source[key]
        options["budget"] = self.budget
        options["seed"] = self.seed
        return options

    def space_source(self) -> Any:
        space = self.source["space"]
        if isinstance(space, str) and (self.base_dir / space).is_file():
            return str(self.base_dir / space)
        if isinstance(space, str) and _is_file_path(space):
            # relative to the experiment file; a path relative to the current directory
            # (which versions before 28 Nov 2026 read, so stored studies may name one) is
            # still read, with a warning, when the experiment's folder has no such file
            path = self.base_dir / Path(space).expanduser()
            if path.is_file():  # ~/spaces/svm.yaml
                return str(path)
            here = Path(space).expanduser()
            if here.is_file():
                if space not in self._warned:
                    self._warned.add(space)
                    logger.warning(
                        "space: %s is not next to the experiment file (%s); using %s in the "
                        "current directory. Paths in an experiment file are relative to its "
                        "folder: move the space file there", space, path, here.resolve(),
                    )
                return str(here.resolve())
            if here.is_absolute():
                raise ExperimentError("space", f"{path}: no such space file")
            raise ExperimentError(
                "space", f"{space}: no such space file, looked for {path} (next to the "
                f"experiment file) and {Path.cwd() / here} (in the current directory)"
            )
        name = self.source.get("name") or self.label
        if isinstance(space, Mapping) and "params" in space and not space.get("name") and name:
            return {**space, "name": name}  # reports would title it "space"
        return space

    def objective(self) -> Callable[[dict[str, Any]], Any]:
        return import_callable(self.source["objective"], "objective", self.base_dir)

    def queue_into(self, study: Any) -> None:
        """Queue the ``enqueue:`` configurations into a new ``study``; a resumed one
        stored them already, unless the run died while queueing them (each is its own
        write): a study holding only the first few gets the rest. Every entry is checked
        before the first is queued, so a bad one leaves the study as it was."""
        configs = []
        for index, config in enumerate(self.source.get("enqueue") or []):
            try:
                configs.append(study.space.complete(config))
            except SpaceError as error:
                raise ExperimentError(f"enqueue[{index}]", str(error)) from None
        stored = [trial.config for trial in study.trials]
        if stored != configs[: len(stored)]:  # a run went past its queue: nothing is missing
            return
        for config in configs[len(stored):]:
            study.enqueue(config)


def _is_file_path(space: str) -> bool:
    """A space given as a path (``spaces/svm.yaml``), not a library name (``svm``);
    :func:`ensembo.spaces.load` tells them apart so too."""
    return bool(Path(space).suffix) or "/" in space or "\\" in space


def _check_keys(document: Mapping[str, Any]) -> None:
    for key in document:
        if key not in _KEYS:
            close = difflib.get_close_matches(str(key), sorted(_KEYS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else "."
            raise ExperimentError(
                str(key), f"unknown key{hint} Valid keys: {', '.join(sorted(_KEYS))}"
            )
    if "objective" in document and _DATA_KEY in document:
        raise ExperimentError("objective", "give either objective: (a function to minimize) "
                              "or data: (a learner tuned on a dataset), not both")
    for key in _REQUIRED:
        if key == "objective" and key not in document and _DATA_KEY not in document:
            raise ExperimentError(key, "required key is missing; give objective: (a function "
                                  "to minimize) or data: (a learner tuned on a dataset)")
        if key != "objective" and key not in document:
            raise ExperimentError(key, "required key is missing")
    budget = document["budget"]
    if not isinstance(budget, int) or isinstance(budget, bool) or budget < 1:
        raise ExperimentError("budget", f"must be a positive integer, got {budget!r}")
    seed = checks.whole_number("seed", document.get("seed", 0), 0)
    if _DATA_KEY in document:  # a larger one failed as a bug (exit 1)
        checks.learner_seed("seed", seed, "in a data: experiment")
    _check_optional_values(document)
    ExecutionSettings.from_document(document.get("execution"))


def _check_optional_values(document: Mapping[str, Any]) -> None:
    """Types of the optional scalar keys (null means absent)."""
    if document.get("n_initial") is not None:
        checks.whole_number("n_initial", document["n_initial"], 0)
    if document.get("timeout") is not None:
        checks.positive_seconds("timeout", document["timeout"])
    for key in ("storage", "name"):
        value = document.get(key)
        if value is not None and not isinstance(value, str):
            raise ExperimentError(key, f"must be a string, got {value!r}")
    if isinstance(document.get("storage"), str) and not document["storage"].strip():
        raise ExperimentError(  # it named the experiment's folder as the study file
            "storage", "must be a file path (e.g. runs/study.db), got an empty string; "
            "leave storage out to keep the study in memory"
        )
    queued = document.get("enqueue")
    if queued is not None and not isinstance(queued, list):
        raise ExperimentError("enqueue", f"must be a list of configurations, got {queued!r}")
    for index, config in enumerate(queued or []):
        if not isinstance(config, Mapping):
            raise ExperimentError(
                f"enqueue[{index}]", f"must be a mapping {{hyperparameter: value}}, got {config!r}"
            )


def parse_experiment(document: Any, base_dir: Path | str = ".", label: str = "") -> Experiment:
    if not isinstance(document, Mapping):
        raise ExperimentError(
            "", f"an experiment must be a mapping of keys, got {type(document).__name__}"
        )
    _check_keys(document)
    return Experiment(source=dict(document), base_dir=Path(base_dir).resolve(), label=label)


class ExperimentProblems(ExperimentError):
    """Several problems in an experiment file (duplicate keys, an inline space's
    problems), reported together; ``problems`` lists them, each naming file and path."""

    def __init__(self, problems: list[ExperimentError]):
        self.problems = list(problems)
        first, more = self.problems[0], len(self.problems) - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        super().__init__(first.path, first.message + suffix)

    def __str__(self) -> str:
        return "\n".join(str(problem) for problem in self.problems)


def load_experiment(path: str | Path) -> Experiment:
    """Read, check and return the experiment in ``path``.

    YAML is read as space files are (``1e5`` is a number, duplicate keys are errors), so
    an inline ``space:`` means what it would in its own file; its problems are reported
    here, with every duplicate key, naming the file and the ``space.`` path.
    """
    from ensembo.spaces.document import load_yaml  # spaces import ensembo; keep it lazy
    from ensembo.spaces.load import embedded_problems

    path = Path(path)
    try:
        document, duplicates = load_yaml(_read_text(path))
    except yaml.YAMLError as error:
        raise ExperimentError(str(path), f"not valid YAML: {error}") from error
    problems = [
        ExperimentError(f"{path}: {d.path}" if d.path else str(path), d.message)
        for d in duplicates
    ]
    if isinstance(document, Mapping):
        problems[:0] = [
            ExperimentError(p.path, p.message)
            for p in embedded_problems(document.get("space"), f"{path}: space")
        ]
    try:
        experiment = parse_experiment(document, path.parent, path.stem)
    except ExperimentError as error:
        where = f"{path}: {error.path}" if error.path else str(path)
        problems.insert(0, ExperimentError(where, error.message))
    if problems:
        raise ExperimentProblems(problems)
    return experiment


def _read_text(path: Path) -> str:
    """The file as UTF-8, whatever the locale (which ``read_text()`` follows); another
    encoding is the user's to fix, named with the file, where it failed as a bug."""
    try:
        return utf8_text(path.read_bytes())
    except OSError as error:
        raise ExperimentError(
            str(path), f"cannot read experiment file ({error.strerror})"
        ) from error
    except ValueError as error:
        raise ExperimentError(str(path), str(error)) from None


def import_callable(reference: Any, key: str, base_dir: Path | None = None) -> Callable[..., Any]:
    """Import ``package.module:attribute``; the experiment's folder is importable too."""
    if not isinstance(reference, str) or ":" not in reference:
        raise ExperimentError(key, f"expected 'package.module:function', got {reference!r}")
    module_name, _, attribute = reference.partition(":")
    if base_dir is not None and str(base_dir) not in sys.path:
        sys.path.insert(0, str(base_dir))
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        where = _where_looked(error, module_name, base_dir)
        raise ExperimentError(
            key, f"cannot import module {module_name!r}{where}: {error}"
        ) from error
    try:
        target = getattr(module, attribute)
    except AttributeError:
        raise ExperimentError(
            key, f"module {module_name!r} has no attribute {attribute!r}"
        ) from None
    if not callable(target):
        raise ExperimentError(key, f"{reference!r} is not callable")
    return target


def _where_looked(error: ImportError, module_name: str, base_dir: Path | None) -> str:
    """' (looked in FOLDER and on Python's path)' when the module itself was not found:
    a resumed study's recorded folder may be gone."""
    if base_dir is None or not is_missing_module(error, module_name):
        return ""
    return f" (looked in the experiment's folder {base_dir} and on Python's path)"


def is_missing_module(error: BaseException | None, module_name: str) -> bool:
    """``module_name`` itself (or its package) was not found; an import failing inside
    the module (its own missing dependency) is the module's problem, not its place's."""
    missing = getattr(error, "name", None)
    if not isinstance(error, ModuleNotFoundError) or missing is None:
        return False
    return module_name == missing or module_name.startswith(f"{missing}.")
