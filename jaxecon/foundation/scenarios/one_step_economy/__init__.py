"""Foundation's ``scenarios/one_step_economy`` package: ``one_step_economy``."""

from jaxecon.foundation.scenarios.one_step_economy import one_step_economy

__all__ = ["one_step_economy"]
