"""Foundation's ``scenarios/simple_wood_and_stone/dynamic_layout.py`` path: ``Uniform``,
``MultiZone`` and ``Quadrant``."""

from jaxecon.core.registry import scenario_registry
from jaxecon.foundation.scenario_envs import MultiZone, Quadrant, Uniform

__all__ = ["Uniform", "MultiZone", "Quadrant", "scenario_registry"]
