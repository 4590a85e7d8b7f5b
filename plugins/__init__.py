"""Built-in plugins, registered through ensembo's own entry points like any other."""

from ensembo.registry import Registry, registry, reload_registry

__all__ = ["Registry", "registry", "reload_registry"]
