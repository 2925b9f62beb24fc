"""Foundation's ``entities/resources.py`` path: ``Resource``, ``Wood``, ``Stone``, ``Coin``."""

from jaxecon.core.registry import Registry, resource_registry
from jaxecon.entities import Coin, Resource, Stone, Wood

__all__ = ["Resource", "Wood", "Stone", "Coin", "Registry", "resource_registry"]
