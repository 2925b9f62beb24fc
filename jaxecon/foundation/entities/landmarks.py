"""Foundation's ``entities/landmarks.py`` path: ``Landmark``, ``House``, ``Water`` and the
source blocks (Foundation generates one ``<Resource>SourceBlock`` class per collectible
resource in a loop; jaxecon declares ``WoodSourceBlock`` and ``StoneSourceBlock``)."""

from jaxecon.core.registry import Registry, landmark_registry, resource_registry
from jaxecon.entities import House, Landmark, StoneSourceBlock, Water, WoodSourceBlock

__all__ = [
    "Landmark", "House", "Water", "WoodSourceBlock", "StoneSourceBlock",
    "Registry", "landmark_registry", "resource_registry",
]
