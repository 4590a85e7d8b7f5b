"""A factory that declares its options (``declares_options``) is judged by them: an
unknown option is refused from the declared signature, with its close match and the
options it takes, before anything the factory raises itself is considered."""

from __future__ import annotations

import functools
import inspect

import attrs
import pytest

import ensembo
from ensembo import hookimpl
from ensembo.errors import ComponentOptionError, PluginContractError
from ensembo.plugins.initial_designs.random_design import RandomDesign
from ensembo.registry import Registry


@attrs.frozen
class GridSettings:
    k: int = 5
    weights: str = "uniform"


@ensembo.declares_options(GridSettings)
class RefusesUnknownItself(RandomDesign):
    def __init__(self, **options):
        unknown = sorted(set(options) - {"k", "weights"})
        if unknown:
            raise TypeError(f"unexpected options {unknown}")
        self.settings = GridSettings(**options)


class _Plugin:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"declared": RefusesUnknownItself}


@pytest.fixture
def reg():
    return Registry.from_plugins({"dist": _Plugin()})


def test_an_unknown_option_is_refused_from_the_declared_signature_first(reg):
    with pytest.raises(PluginContractError) as caught:
        reg.create("initial_design", "declared", wieghts="distance")
    assert str(caught.value) == (
        "initial design 'declared' (from dist) rejected options ['wieghts']: unknown: "
        "wieghts (did you mean weights?); its options: k, weights")


# --- a TypeError from a factory that declares its settings class -----------------------


@attrs.frozen
class TypedSettings:
    """Refuses a wrong type in each way a settings class does."""

    k: int = attrs.field(default=5, validator=attrs.validators.instance_of(int))
    weights: str = "uniform"
    scale: float = attrs.field(default=1.0)

    @scale.validator
    def _positive_number(self, attribute, value):
        if not isinstance(value, (int, float)):
            raise TypeError(f"scale must be a number, got {type(value).__name__}")

    def __attrs_post_init__(self):
        if not isinstance(self.weights, str):
            raise TypeError(f"weights must be a str, got {type(self.weights).__name__}")


@ensembo.declares_options(TypedSettings)
class Forwards(RandomDesign):
    """docs/plugin-authoring.md §5's pattern."""

    def __init__(self, **options):
        self.settings = TypedSettings(**options)


class _Base(RandomDesign):
    def __init__(self, **options):
        self.settings = TypedSettings(**options)


@ensembo.declares_options(TypedSettings)
class ThroughSuper(_Base):
    def __init__(self, **options):
        super().__init__(**options)


def _logged(init):
    @functools.wraps(init)
    def wrapper(self, **options):
        return init(self, **options)
    return wrapper


@ensembo.declares_options(TypedSettings)
class DecoratedInit(RandomDesign):
    @_logged
    def __init__(self, **options):
        self.settings = TypedSettings(**options)


@ensembo.declares_options(TypedSettings)
def make(**options):
    return Forwards(**options)


@ensembo.declares_options(TypedSettings)
class NeedsTorch(RandomDesign):
    def __init__(self, **options):
        self.settings = TypedSettings(**options)
        raise TypeError("requires torch")


@attrs.frozen
class WithTask:
    task: str
    k: int = attrs.field(default=5, validator=attrs.validators.instance_of(int))


@ensembo.declares_options(WithTask, without=("task",))
class SuppliesTheTask(RandomDesign):
    def __init__(self, **options):
        raise TypeError("raised before the settings were built")


class _Declared:
    @hookimpl
    def ensembo_add_initial_designs(self):
        return {"forwards": Forwards, "through-super": ThroughSuper,
                "decorated-init": DecoratedInit, "function": make,
                "partial": functools.partial(make, scale=2.0),
                "needs-torch": NeedsTorch, "supplies-task": SuppliesTheTask}


@pytest.fixture
def declared():
    return Registry.from_plugins({"dist": _Declared()})


@pytest.mark.parametrize("name", ["forwards", "through-super", "decorated-init", "function",
                                  "partial"])
@pytest.mark.parametrize(("options", "said"), [
    ({"k": "3"}, "'k' must be <class 'int'> (got '3' that is a <class 'str'>)."),
    ({"weights": 3}, "weights must be a str, got int"),
    ({"scale": "big"}, "scale must be a number, got str"),
])
def test_options_its_settings_class_refuses_are_an_option_error(declared, name, options, said):
    with pytest.raises(ComponentOptionError) as caught:
        declared.create("initial_design", name, **options)
    assert str(caught.value) == (
        f"initial design '{name}' (from dist) rejected options {options}: {said}")
    assert isinstance(caught.value.__cause__, TypeError)


def test_a_type_error_when_its_settings_class_accepts_the_options_is_a_bug(declared):
    with pytest.raises(TypeError, match="requires torch") as caught:
        declared.create("initial_design", "needs-torch", k=3)
    assert not isinstance(caught.value, ComponentOptionError)
    assert caught.value.__notes__ == ["while building initial design 'needs-torch' (from dist)"]


def test_a_settings_class_needing_what_the_factory_supplies_cannot_decide(declared):
    """``WithTask(k="3")`` fails for the missing task, not for the option: no evidence."""
    with pytest.raises(TypeError, match="raised before the settings") as caught:
        declared.create("initial_design", "supplies-task", k="3")
    assert not isinstance(caught.value, ComponentOptionError)


# --- a declared source with a TypeError bug of its own ----------------------------------


class BuggyForEveryK(RandomDesign):
    """A component class declared as its own source, with a bug whatever the options."""

    def __init__(self, k: int = 5, weights: str = "uniform"):
        self.table = dict.fromkeys(range(k)) | None


@ensembo.declares_options(BuggyForEveryK)
def forwards_to_buggy(**options):
    return BuggyForEveryK(**options)


def test_a_source_failing_without_the_options_too_is_a_bug_not_a_refusal():
    """The rebuild repeats the bug for k=3; the control (built with no options) fails as
    well, so the options are not what it refuses (3411e95 blamed them)."""

    class Plugin:
        @hookimpl
        def ensembo_add_initial_designs(self):
            return {"buggy-source": forwards_to_buggy}

    reg = Registry.from_plugins({"dist": Plugin()})
    with pytest.raises(TypeError, match=r"unsupported operand") as caught:
        reg.create("initial_design", "buggy-source", k=3)
    assert not isinstance(caught.value, ComponentOptionError)
    assert caught.value.__notes__ == ["while building initial design 'buggy-source' (from dist)"]


class _BuggyChain:
    """Stands for any TypeError bug reached from the GP's constructor with some options."""

    def __init__(self, samples, burn_in):
        self.length = len(None)


@pytest.mark.parametrize("name", ["gp", "gp-cond"])
def test_a_type_error_bug_in_the_gp_is_not_blamed_on_its_options(monkeypatch, name):
    """gp declared GaussianProcessSurrogate itself: the rebuild repeated a bug reached only
    with hyperparameters=mcmc, and the control (ml2) passed, so it was an option error."""
    from ensembo.plugins.surrogates.gp import surrogate
    from ensembo.registry import registry

    monkeypatch.setattr(surrogate, "HyperparameterChain", _BuggyChain)
    with pytest.raises(TypeError, match="has no len") as caught:
        registry().create("surrogate", name, hyperparameters="mcmc")
    assert not isinstance(caught.value, ComponentOptionError)
    assert caught.value.__notes__ == [f"while building surrogate {name!r} (from ensembo)"]


@pytest.mark.parametrize(("name", "hidden"), [("gp", {"plugin"}),
                                              ("gp-cond", {"plugin", "conditional"})])
def test_the_gp_still_declares_its_options_and_refuses_bad_values(name, hidden):
    from ensembo.plugins.surrogates.gp.surrogate import GaussianProcessSurrogate
    from ensembo.registry import registry

    factory = registry().factory("surrogate", name)
    assert list(inspect.signature(factory).parameters) == [
        p for p in inspect.signature(GaussianProcessSurrogate).parameters if p not in hidden]
    with pytest.raises(ComponentOptionError, match="restarts must be an integer"):
        registry().create("surrogate", name, restarts="two")


class ClaimsItsName(RandomDesign):
    """A source whose second build fails otherwise than refusing (a resource it claims)."""

    claimed: set = set()

    def __init__(self, name: str = "default", k: int = 5):
        if name in ClaimsItsName.claimed:
            raise RuntimeError(f"{name!r} is already open")
        ClaimsItsName.claimed.add(name)


@ensembo.declares_options(ClaimsItsName)
def claims_then_fails(**options):
    ClaimsItsName(**options)
    return options["k"] + None  # the plugin's bug, after building


def test_what_else_the_rebuild_raises_does_not_replace_the_factory_error():
    """3411e95 let the rebuild's RuntimeError escape in place of the plugin's TypeError."""

    class Plugin:
        @hookimpl
        def ensembo_add_initial_designs(self):
            return {"claims": claims_then_fails}

    ClaimsItsName.claimed.clear()
    reg = Registry.from_plugins({"dist": Plugin()})
    with pytest.raises(TypeError, match="unsupported operand") as caught:
        reg.create("initial_design", "claims", k=3)
    assert caught.value.__notes__ == ["while building initial design 'claims' (from dist)"]
