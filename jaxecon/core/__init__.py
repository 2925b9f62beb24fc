"""jaxecon's core: state pytrees, registries, action layouts, the reset/step phases, the scenario base
class and the engine (the functional env)."""

from jaxecon.core.component import Component, NoParams
from jaxecon.core.env import Economy
from jaxecon.core.param_checks import validate_params
from jaxecon.core.registry import (
    Registry,
    agent_registry,
    component_registry,
    endogenous_registry,
    landmark_registry,
    resource_registry,
    scenario_registry,
)
from jaxecon.core.action_layout import ActionLayout
from jaxecon.core.scenario import Scenario
from jaxecon.core.state import EnvParams, EnvState, NoState, SubState

__all__ = [
    "ActionLayout", "Component", "Economy", "EnvParams", "EnvState", "NoParams",
    "NoState", "Registry", "Scenario", "SubState", "agent_registry", "component_registry", "endogenous_registry",
    "landmark_registry", "resource_registry", "scenario_registry", "validate_params",
]
