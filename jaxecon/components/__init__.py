"""Components, one Foundation component family per module; importing registers them."""

from jaxecon.components.build import Build
from jaxecon.components.continuous_double_auction import ContinuousDoubleAuction
from jaxecon.components.covid19 import (
    ControlUSStateOpenCloseStatus,
    FederalGovernmentSubsidy,
    VaccinationCampaign,
)
from jaxecon.components.gather import Gather
from jaxecon.components.redistribution import PeriodicBracketTax, WealthRedistribution
from jaxecon.components.simple_labor import SimpleLabor

__all__ = [
    "Build", "ContinuousDoubleAuction", "ControlUSStateOpenCloseStatus", "FederalGovernmentSubsidy",
    "Gather", "PeriodicBracketTax", "SimpleLabor", "VaccinationCampaign", "WealthRedistribution",
]
