"""Foundation's ``components/redistribution.py`` path: ``PeriodicBracketTax`` and
``WealthRedistribution``."""

from jaxecon.components import PeriodicBracketTax, WealthRedistribution
from jaxecon.core.registry import component_registry
from jaxecon.foundation.components.utils import annealed_tax_limit, annealed_tax_mask

__all__ = [
    "PeriodicBracketTax", "WealthRedistribution", "component_registry",
    "annealed_tax_limit", "annealed_tax_mask",
]
