"""Components, one Foundation component family per module; importing registers them."""

from jaxecon.components.build import Build
from jaxecon.components.continuous_double_auction import ContinuousDoubleAuction
from jaxecon.components.gather import Gather
from jaxecon.components.redistribution import PeriodicBracketTax, WealthRedistribution
from jaxecon.components.simple_labor import SimpleLabor

__all__ = ["Build", "ContinuousDoubleAuction", "Gather", "PeriodicBracketTax", "SimpleLabor", "WealthRedistribution"]
