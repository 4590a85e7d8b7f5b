"""Study.load with another surrogate than the stored study's (docs/guide/study.md)."""

from ensembo import spaces
from ensembo.study import Study


def test_a_random_search_study_continues_with_a_model_passed_to_load(tmp_path):
    """A study without a model stores its acquisition optimizer as {"name": "auto"};
    Study.load(path, surrogate="gp") failed with "Unknown acquisition optimizer 'auto'",
    as only the plain string "auto" was read as the default's choice."""
    space = spaces.load({"name": "s", "params": {"x": {"type": "float", "low": 0, "high": 1}}})
    path = tmp_path / "study.db"
    first = Study(space, storage=path, surrogate=None, seed=0)
    first.optimize(lambda config: config["x"], n_trials=5)
    first.close()

    resumed = Study.load(path, surrogate="gp")
    resumed.optimize(lambda config: config["x"], n_trials=2)
    assert len(resumed.history) == 7
    resumed.close()
