"""PNG figures: written, labelled, log-scaled when the loss spans decades."""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

from ensembo.report import plots  # noqa: E402
from ensembo.report.data import compute_report  # noqa: E402


@pytest.fixture
def captured(monkeypatch):
    figures = {}

    def keep(figure, path):
        figures[path.name] = figure
        figure.savefig(path)
        return path

    monkeypatch.setattr(plots, "save", keep)
    return figures


def _is_png(path) -> bool:
    return path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_study_figures_are_written_and_labelled(stored_study, tmp_path, captured):
    written = plots.plot_study(compute_report(stored_study[0]), tmp_path)
    assert [p.name for p in written] == [
        "convergence.png",
        "ensemble_composition.png",
        "hyperparameters.png",
    ]
    assert all(_is_png(p) for p in written)
    for name, figure in captured.items():
        for axes in figure.axes:
            if axes.get_visible() and axes.get_label() != "<colorbar>":
                assert axes.get_xlabel(), f"{name}: x axis without label"
    convergence = captured["convergence.png"].axes[0]
    assert convergence.get_ylabel().startswith("validation loss (mse)")


def test_convergence_is_log_scaled_when_the_loss_spans_decades(stored_study, tmp_path, captured):
    data = compute_report(stored_study[0])
    losses = [t.loss for t in data.trials if t.loss is not None]
    assert max(losses) / min(losses) > 100  # the fixture's losses span decades
    plots.plot_convergence(data, tmp_path / "c.png")
    assert captured["c.png"].axes[0].get_yscale() == "log"
    assert "log scale" in captured["c.png"].axes[0].get_ylabel()


def test_hyperparameter_panels_use_log_axes_for_log_hyperparameters(
    stored_study, tmp_path, captured
):
    plots.plot_hyperparameters(compute_report(stored_study[0]), tmp_path / "h.png")
    by_label = {a.get_xlabel(): a for a in captured["h.png"].axes if a.get_xlabel()}
    assert by_label["alpha (log scale)"].get_xscale() == "log"
    assert by_label["depth"].get_xscale() == "linear"


def test_spans_decades():
    assert plots.spans_decades([0.01, 0.5, 3.0])
    assert not plots.spans_decades([0.2, 0.5, 3.0])
    assert not plots.spans_decades([-1.0, 0.001, 10.0])  # non-positive: no log axis


def test_composition_groups_minor_members(monkeypatch, stored_study):
    monkeypatch.setattr(plots, "MAX_COMPOSITION_MEMBERS", 1)
    numbers, labels, weights = plots.composition_matrix(compute_report(stored_study[0]))
    assert labels[-1] == "other trials" and len(labels) == 2
    assert weights.sum(axis=1) == pytest.approx(1.0)


def test_final_members_always_have_their_own_series(monkeypatch, stored_study):
    monkeypatch.setattr(plots, "MAX_COMPOSITION_MEMBERS", 1)
    data = compute_report(stored_study[0])
    numbers, labels, weights = plots.composition_matrix(data)
    assert labels[0] == f"trial {data.members[0].number}"


def test_linear_convergence_cuts_off_outliers(tmp_path, captured):
    import attrs

    from ensembo.report.data import IterationPoint
    from ensembo.trials import TrialState

    losses = [0.5, 0.4, 0.35, 0.3, 0.32, 9.0, 0.31, 0.29, 0.33, 0.3]
    best = [min(losses[: i + 1]) for i in range(len(losses))]
    points = tuple(
        IterationPoint(
            number=i, state=TrialState.COMPLETE, loss=loss, best_so_far=b, ensemble_loss=b
        )
        for i, (loss, b) in enumerate(zip(losses, best, strict=True))
    )
    data = attrs.evolve(compute_report(_study_path(tmp_path)), iterations=points)
    plots.plot_convergence(data, tmp_path / "c.png")
    axes = captured["c.png"].axes[0]
    assert axes.get_yscale() == "linear"
    assert 0.5 <= axes.get_ylim()[1] < 9.0
    assert any("above the axis (1)" in text.get_text() for text in axes.get_legend().get_texts())


def _study_path(tmp_path):
    from ConfigSpace import ConfigurationSpace

    from ensembo import Study

    path = tmp_path / "small.db"
    Study(ConfigurationSpace(space={"x": (0.0, 1.0)}), surrogate=None, storage=path).optimize(
        lambda c: c["x"], n_trials=10
    )
    return path


def test_ordinal_and_constant_hyperparameters_are_drawn(tmp_path, captured):
    from ConfigSpace import ConfigurationSpace, Constant, Float, OrdinalHyperparameter

    from ensembo import Study

    space = ConfigurationSpace(name="ordinal")
    space.add(
        [
            OrdinalHyperparameter("size", ["small", "medium", "large"]),
            Float("x", (0.0, 1.0)),
            Constant("c", "k"),
        ]
    )
    rank = {"small": 1, "medium": 2, "large": 3}
    Study(space, surrogate=None, storage=tmp_path / "o.db").optimize(
        lambda c: rank[c["size"]] + c["x"], n_trials=15
    )
    data = compute_report(tmp_path / "o.db")
    assert [name for name, _ in data.importance][0] == "size"
    plots.plot_hyperparameters(data, tmp_path / "h.png")
    size_axes = next(a for a in captured["h.png"].axes if a.get_xlabel() == "size")
    assert [t.get_text() for t in size_axes.get_xticklabels()] == ["small", "medium", "large"]


def test_narrow_log_axes_get_plain_labels_at_1_2_5(tmp_path):
    from matplotlib.ticker import FormatStrFormatter, NullFormatter

    figure = plots.new_figure(3, 3)
    narrow, wide = figure.subplots(1, 2)
    plots.use_log_scale(narrow.xaxis, [0.03, 0.4])
    plots.use_log_scale(wide.yaxis, [1e-3, 10.0])
    assert narrow.get_xscale() == "log" and wide.get_yscale() == "log"
    assert isinstance(narrow.xaxis.get_major_formatter(), FormatStrFormatter)
    assert isinstance(narrow.xaxis.get_minor_formatter(), NullFormatter)
    assert not isinstance(wide.yaxis.get_major_formatter(), FormatStrFormatter)


def test_no_convergence_figure_before_a_trial_completed(tmp_path, captured):
    from ConfigSpace import ConfigurationSpace

    from ensembo import Study

    path = tmp_path / "empty.db"
    Study(ConfigurationSpace(space={"x": (0.0, 1.0)}), surrogate=None, storage=path)
    written = plots.plot_study(compute_report(path), tmp_path)
    assert "convergence.png" not in captured and tmp_path / "convergence.png" not in written
