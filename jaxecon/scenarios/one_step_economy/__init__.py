"""The one-step economy (Foundation's ``one_step_economy``): taxes, then labor."""

from jaxecon.scenarios.one_step_economy.one_step_economy import OneStepEconomy

__all__ = ["OneStepEconomy"]
