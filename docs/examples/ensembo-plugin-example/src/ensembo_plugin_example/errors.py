"""Errors root in ensembo's, so ``except ensembo.EnsemboError`` catches them too."""

from ensembo.errors import EnsemboError


class OptionError(EnsemboError, ValueError):
    """A plugin option has a value outside what the plugin accepts."""

    def __init__(self, plugin: str, option: str, value: object, valid: str):
        self.plugin, self.option, self.value = plugin, option, value
        super().__init__(f"{plugin}: option {option!r} must be {valid}, got {value!r}")
