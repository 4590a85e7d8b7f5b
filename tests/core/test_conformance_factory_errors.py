"""A factory that raises PluginContractError itself while building (a backend it needs
is missing) fails the conformance "build" check, as docs/plugin-authoring.md §7 says of
any factory raising while building: it was filed under "protocol", which only an object
lacking its protocol's methods fails."""

from __future__ import annotations

import pytest

from ensembo import hookimpl
from ensembo.conformance import ConformanceError, check_surrogate
from ensembo.errors import PluginContractError
from ensembo.registry import Registry


def needs_a_backend():
    raise PluginContractError("knn-gpu: the CUDA backend is not available")


class NotASurrogate:
    pass


class RegistersThem:
    @hookimpl
    def ensembo_add_surrogates(self):
        return {"knn-gpu": needs_a_backend, "not-a-surrogate": NotASurrogate}


def _failures(spec, registry=None) -> dict[str, str]:
    with pytest.raises(ConformanceError) as caught:
        check_surrogate(spec, registry=registry)
    return dict(caught.value.failures)


@pytest.fixture
def registry() -> Registry:
    return Registry.from_plugins({"mine": RegistersThem()}, builtins=True)


@pytest.mark.parametrize("given", ["registered", "directly"])
def test_a_factory_raising_a_contract_error_fails_build(registry, given):
    spec = "knn-gpu" if given == "registered" else needs_a_backend
    failures = _failures(spec, registry)
    assert list(failures) == ["build"]
    assert "CUDA backend is not available" in failures["build"]


@pytest.mark.parametrize("given", ["registered", "directly"])
def test_an_object_lacking_the_protocol_still_fails_protocol(registry, given):
    spec = "not-a-surrogate" if given == "registered" else NotASurrogate
    assert list(_failures(spec, registry)) == ["protocol"]
