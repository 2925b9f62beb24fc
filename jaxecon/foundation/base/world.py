"""Foundation's ``base/world.py`` path: ``World`` and ``Maps``, the shim's world views."""

from jaxecon.core.registry import agent_registry, landmark_registry, resource_registry
from jaxecon.foundation.world import Maps, World

__all__ = ["World", "Maps", "agent_registry", "landmark_registry", "resource_registry"]
