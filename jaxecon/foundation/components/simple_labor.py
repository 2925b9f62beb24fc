"""Foundation's ``components/simple_labor.py`` path: ``SimpleLabor``."""

from jaxecon.components import SimpleLabor
from jaxecon.core.registry import component_registry

__all__ = ["SimpleLabor", "component_registry"]
