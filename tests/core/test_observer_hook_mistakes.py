"""A study's observer whose hook method pluggy would ignore (undecorated, misspelt, or
both) is refused when the study is built, naming the class, the method and the fix,
instead of being registered and never running."""

from __future__ import annotations

import pytest

from ensembo import Study, hookimpl
from ensembo.registry import Registry, find_hook_mistakes


def _quadratic(config):
    return config["x"] ** 2


class StopWithoutDecorator:
    def ensembo_should_stop(self, study):  # @hookimpl forgotten
        return True


class DecoratedTypo:
    @hookimpl
    def ensembo_trial_finish(self, study, trial):
        pass


class GoodHookAndForgottenOne:
    @hookimpl
    def ensembo_trial_finished(self, study, trial):
        pass

    def ensembo_should_stop(self, study):  # @hookimpl forgotten
        return True


@pytest.mark.parametrize("observer, expected", [
    (StopWithoutDecorator(), (
        "callback StopWithoutDecorator object: StopWithoutDecorator.ensembo_should_stop would "
        "never run: defines ensembo_should_stop without @ensembo.hookimpl, so pluggy ignores "
        "it; add @ensembo.hookimpl above it"
    )),
    (DecoratedTypo(), (
        "callback DecoratedTypo object: DecoratedTypo.ensembo_trial_finish would never run: "
        "unknown hook 'ensembo_trial_finish' (did you mean 'ensembo_trial_finished'?)"
    )),
    (GoodHookAndForgottenOne(), "GoodHookAndForgottenOne.ensembo_should_stop would never run"),
], ids=["undecorated", "decorated-typo", "one-of-two-undecorated"])
def test_an_observer_with_a_hook_pluggy_would_ignore_is_refused(flat_space, observer, expected):
    with pytest.raises(TypeError) as raised:
        Study(flat_space, surrogate=None, callbacks=[observer])
    assert expected in str(raised.value)


class CallableWithDecoratedTypo:
    def __call__(self, study, trial):
        pass

    @hookimpl
    def ensembo_should_stopp(self, study):
        return True


def test_a_callable_with_a_decorated_misspelt_hook_is_refused(flat_space):
    with pytest.raises(TypeError, match=r"CallableWithDecoratedTypo\.ensembo_should_stopp "
                       r"would never run: unknown hook 'ensembo_should_stopp' "
                       r"\(did you mean 'ensembo_should_stop'\?\)"):
        Study(flat_space, surrogate=None, callbacks=[CallableWithDecoratedTypo()])


class Helpers:
    @hookimpl
    def ensembo_trial_finished(self, study, trial):
        pass

    def ensembo_format_loss(self, loss):  # close to no hook: a helper, not a typo
        return f"{loss:.3g}"

    def ensembo_study_name(self, study):  # close to ensembo_study_finished, still a helper
        return "mine"


def test_a_correct_observer_with_ensembo_named_helpers_is_accepted(flat_space):
    """An undecorated name only close to a hook's is a helper: refusing it refused
    correct observers and failed correct plugin modules."""
    study = Study(flat_space, surrogate=None, callbacks=[Helpers()])
    study.optimize(_quadratic, n_trials=1)
    assert find_hook_mistakes(Helpers()) == []
    assert Registry.from_plugins({"helper-dist": Helpers()}).failures == []
