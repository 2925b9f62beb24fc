"""Foundation's ``components/continuous_double_auction.py`` path: ``ContinuousDoubleAuction``."""

from jaxecon.components import ContinuousDoubleAuction
from jaxecon.core.registry import component_registry, resource_registry

__all__ = ["ContinuousDoubleAuction", "component_registry", "resource_registry"]
