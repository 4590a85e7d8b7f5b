"""A Ctrl-C that a learner swallows in its fit (scikit-learn's MLP catches
KeyboardInterrupt, warns "Training interrupted by user." and returns a half-trained
model) still stops the run: the trial is interrupted, not stored complete with a
half-trained model's loss, and a final refit is not kept half-trained either."""

from __future__ import annotations

import signal
import textwrap
from concurrent.futures import ThreadPoolExecutor

import pytest
from swallowing_learners import InterruptSwallower, MLPInterruptedAtFirstEpoch

from ensembo import Study, TrialState, interrupts
from ensembo.cli import main
from ensembo.ml import Task, run_task
from ensembo.ml.final import refitted_model

CONFIG = {"behaviour": "fit", "depth": 2}


@pytest.fixture
def python_sigint_handler():
    """Python's own SIGINT handler around the test, and that it is back afterwards."""
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    try:
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGINT, before)


@pytest.fixture
def swallower_task(tree_only_space, classification_data):
    InterruptSwallower.reset(interrupted_fit=1)
    X, y = classification_data
    task = Task(X, y, task="classification", space=tree_only_space, validation=0.3)
    task.build = lambda config: InterruptSwallower()
    return task


def _study(space, task):
    return Study(space, surrogate=None, validation_targets=task.validation_targets(),
                 loss="zero-one", task="classification", seed=0)


def test_a_trial_whose_learner_swallows_ctrl_c_is_interrupted(
    python_sigint_handler, swallower_task, tree_only_space
):
    study = _study(tree_only_space, swallower_task)
    with pytest.raises(KeyboardInterrupt):
        run_task(study, swallower_task, 3)
    assert InterruptSwallower.swallowed == 1
    assert [t.state for t in study.trials] == [TrialState.INTERRUPTED]


def test_a_ctrl_c_a_learner_turned_into_an_error_interrupts_its_trial(
    python_sigint_handler, swallower_task, tree_only_space
):
    InterruptSwallower.reset(interrupted_fit=1, turned_into=RuntimeError)
    study = _study(tree_only_space, swallower_task)
    with pytest.raises(KeyboardInterrupt):
        run_task(study, swallower_task, 3)
    assert [t.state for t in study.trials] == [TrialState.INTERRUPTED]  # not failed


def test_a_refit_whose_learner_swallows_ctrl_c_raises_it(python_sigint_handler, swallower_task):
    with pytest.raises(KeyboardInterrupt):
        refitted_model(swallower_task, 0, CONFIG)
    assert InterruptSwallower.swallowed == 1


def test_an_mlp_interrupted_during_its_fit_raises_ctrl_c(
    python_sigint_handler, tree_only_space, classification_data
):
    X, y = classification_data
    task = Task(X, y, task="classification", space=tree_only_space, validation=0.3)
    task.build = lambda config: MLPInterruptedAtFirstEpoch(
        hidden_layer_sizes=(4,), max_iter=20, random_state=0)
    MLPInterruptedAtFirstEpoch.epochs_seen = 0
    with pytest.raises(KeyboardInterrupt):
        task.evaluate(CONFIG)
    assert MLPInterruptedAtFirstEpoch.epochs_seen == 1  # it stopped at the Ctrl-C


def test_a_program_handler_that_does_not_raise_keeps_its_meaning(swallower_task):
    noted = []
    before = signal.signal(signal.SIGINT, lambda number, frame: noted.append(number))
    try:
        model = swallower_task.fit(CONFIG)
    except KeyboardInterrupt:  # caught, or pytest would take it as its own Ctrl-C
        pytest.fail("a Ctrl-C that the program's own handler dealt with was raised")
    finally:
        signal.signal(signal.SIGINT, before)
    assert noted == [signal.SIGINT] and InterruptSwallower.swallowed == 0
    assert list(model.classes_) == ["a", "b", "c"]


def test_fits_in_worker_threads_run_as_before(python_sigint_handler, swallower_task):
    InterruptSwallower.reset(interrupted_fit=None)  # no signal: it would go to the main thread
    with ThreadPoolExecutor(2) as pool:
        models = list(pool.map(lambda _: swallower_task.fit(CONFIG), range(2)))
    assert all(list(model.classes_) == ["a", "b", "c"] for model in models)


EXPERIMENT = """
space:
  name: swallower
  estimator: swallowing_learners.InterruptSwallower
  params:
    depth: {type: int, low: 1, high: 4}
data:
  dataset: rows.csv
  target: label
surrogate: null
ensemble: best
budget: 2
seed: 0
"""


def _run(tmp_path):
    (tmp_path / "rows.csv").write_text("x1,x2,label\n" + "".join(
        f"{row},{row % 7},{'yes' if row % 3 else 'no'}\n" for row in range(60)))
    experiment = tmp_path / "swallower.yaml"
    experiment.write_text(textwrap.dedent(EXPERIMENT))
    storage = tmp_path / "swallower.db"
    return main(["run", str(experiment), "--storage", str(storage), "--no-progress"]), storage


@pytest.mark.parametrize(
    ("interrupted_fit", "states"),
    [
        (2, [TrialState.COMPLETE, TrialState.INTERRUPTED]),  # the second trial's fit
        (3, [TrialState.COMPLETE] * 2),  # the final refit, after both trials
    ],
)
def test_ensembo_run_exits_130_when_a_learner_swallows_ctrl_c(
    python_sigint_handler, tmp_path, capsys, interrupted_fit, states
):
    InterruptSwallower.reset(interrupted_fit)
    code, storage = _run(tmp_path)
    assert InterruptSwallower.swallowed == 1
    assert code == 130, capsys.readouterr().err
    assert [t.state for t in Study.load(storage).trials] == states


def test_a_write_inside_an_in_process_fit_is_still_held_back_from_ctrl_c(python_sigint_handler):
    """An ensembo search as the learner of another (``EnsemboClassifier`` in a data run)
    writes its trials inside the outer fit: ``deferred`` took the chained handler for a
    program's own and let a Ctrl-C cut the write in two (review of 8fb21ba)."""
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts.interrupt_not_swallowed():
            with interrupts.deferred():
                signal.raise_signal(signal.SIGINT)
                steps.append("write finished")
            steps.append("after the write")  # not reached: raised when the write ended
    assert steps == ["write finished"]
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_ctrl_c_interrupts_every_trial_of_a_batch_when_an_observer_raises(
    swallower_task, tree_only_space, monkeypatch
):
    """Each trial of the batch was told INTERRUPTED with the observers notified, so an
    observer that raised on the first left the others running for ever, and its error
    replaced the Ctrl-C."""
    import ensembo.ml.loop as loop

    def raising_observer(study, trial):
        raise RuntimeError(f"observer down at trial {trial.number}")

    class InterruptedParallel:
        def __init__(self, **options):
            pass

        def __call__(self, calls):
            raise KeyboardInterrupt

    monkeypatch.setattr(loop.joblib, "Parallel", InterruptedParallel)
    study = Study(tree_only_space, surrogate=None, seed=0, callbacks=[raising_observer],
                  validation_targets=swallower_task.validation_targets(), loss="zero-one",
                  task="classification")
    with pytest.raises(KeyboardInterrupt) as raised:
        run_task(study, swallower_task, 4, n_jobs=2)
    assert [t.state for t in study.trials] == [TrialState.INTERRUPTED] * 2
    assert "observer down at trial 1" in "\n".join(raised.value.__notes__)
