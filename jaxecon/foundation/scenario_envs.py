"""Foundation's scenario classes as shim environments, under Foundation's class names.

In Foundation a scenario is a class, and ``CovidAndEconomyEnvironment(**config)``
(the WarpDrive tutorial's way) builds an environment as
``make_env_instance("CovidAndEconomySimulation", **config)`` does. Each name
here is the shim's scenario class of one registered jaxecon scenario
(``jaxecon.foundation.base.base_env.scenario_registry``), so
``isinstance(env, foundation.scenarios.get(name))`` holds for either way of
building it; the module-layout files
(``jaxecon.foundation.scenarios.covid19.covid19_env`` and the others)
re-export them.
"""

from __future__ import annotations

from jaxecon.foundation.base.base_env import scenario_registry

LayoutFromFile = scenario_registry.get("layout_from_file/simple_wood_and_stone")
SplitLayout = scenario_registry.get("split_layout/simple_wood_and_stone")
Uniform = scenario_registry.get("uniform/simple_wood_and_stone")
MultiZone = scenario_registry.get("multi_zone/simple_wood_and_stone")
Quadrant = scenario_registry.get("quadrant/simple_wood_and_stone")
OneStepEconomy = scenario_registry.get("one-step-economy")
CovidAndEconomyEnvironment = scenario_registry.get("CovidAndEconomySimulation")
