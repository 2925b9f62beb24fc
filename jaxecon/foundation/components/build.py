"""Foundation's ``components/build.py`` path: ``Build``."""

from jaxecon.components import Build
from jaxecon.core.registry import component_registry

__all__ = ["Build", "component_registry"]
