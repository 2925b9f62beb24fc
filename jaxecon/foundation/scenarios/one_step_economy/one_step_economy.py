"""Foundation's ``scenarios/one_step_economy/one_step_economy.py`` path: ``OneStepEconomy``."""

from jaxecon.core.registry import scenario_registry
from jaxecon.foundation.scenario_envs import OneStepEconomy

__all__ = ["OneStepEconomy", "scenario_registry"]
