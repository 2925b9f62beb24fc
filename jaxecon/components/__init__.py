"""Components, one job per module; importing registers them.

Foundation's ``redistribution`` module is split into ``tax_schedules``,
``saez``, ``periodic_bracket_tax`` and ``wealth_redistribution``;
``jaxecon.components.redistribution`` re-exports their public names.
"""

from jaxecon.components.build import Build
from jaxecon.components.continuous_double_auction import ContinuousDoubleAuction
from jaxecon.components.covid19 import (
    ControlUSStateOpenCloseStatus,
    FederalGovernmentSubsidy,
    VaccinationCampaign,
)
from jaxecon.components.gather import Gather
from jaxecon.components.periodic_bracket_tax import PeriodicBracketTax
from jaxecon.components.simple_labor import SimpleLabor
from jaxecon.components.wealth_redistribution import WealthRedistribution

__all__ = [
    "Build", "ContinuousDoubleAuction", "ControlUSStateOpenCloseStatus", "FederalGovernmentSubsidy",
    "Gather", "PeriodicBracketTax", "SimpleLabor", "VaccinationCampaign", "WealthRedistribution",
]
