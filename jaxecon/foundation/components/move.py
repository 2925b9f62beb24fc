"""Foundation's ``components/move.py`` path: ``Gather`` (movement and collection)."""

from jaxecon.components import Gather
from jaxecon.core.registry import component_registry

__all__ = ["Gather", "component_registry"]
