"""Foundation's ``scenarios`` package: ``covid19.covid19_env``,
``one_step_economy.one_step_economy``, ``simple_wood_and_stone.{layout_from_file,
dynamic_layout}`` and ``utils.{rewards, social_metrics}``.

Each scenario module holds Foundation's scenario class under its Foundation
name (e.g. ``CovidAndEconomyEnvironment``): a shim environment class, so
``CovidAndEconomyEnvironment(**config)`` builds the environment
(``jaxecon.foundation.scenario_envs``). ``jaxecon.foundation.scenarios``
itself is the scenario registry, as in Foundation (``foundation/__init__.py``
rebinds the name).
"""

from jaxecon.foundation.base.base_env import scenario_registry
from jaxecon.foundation.scenarios import utils
from jaxecon.foundation.scenarios.covid19 import covid19_env
from jaxecon.foundation.scenarios.one_step_economy import one_step_economy
from jaxecon.foundation.scenarios.simple_wood_and_stone import dynamic_layout, layout_from_file

__all__ = [
    "scenario_registry", "covid19_env", "one_step_economy", "dynamic_layout", "layout_from_file", "utils",
]
