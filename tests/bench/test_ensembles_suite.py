"""The ``ensembles`` benchmark: planning, one real block, and the report's statistics."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ensembo.bench.ensembles import EXPERIMENTS, Block, execute, plan
from ensembo.bench.ensembles_report import render_report


def test_plan_interleaves_experiments_so_every_one_progresses(tmp_path):
    blocks = plan(tmp_path, ["esmbo", "eo"], seeds=[0], budget=10, limit=2)
    first = [(b.experiment, b.space, b.dataset) for b in blocks[:3]]
    assert first == [("esmbo", "svm", "australian"), ("esmbo", "random-forest", "australian"),
                     ("eo", "cash-levesque", "australian")]
    assert len(blocks) == 6
    assert len({b.path for b in blocks}) == 6


@pytest.mark.slow
def test_one_block_scores_every_method_on_test_data(tmp_path):
    path = tmp_path / "block.json"
    record = execute(Block(experiment="esmbo", dataset="iris", space="svm", seed=0, budget=8,
                           path=str(path)))
    assert record["status"] == "complete", record["error"]
    assert json.loads(path.read_text())["status"] == "complete"
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
