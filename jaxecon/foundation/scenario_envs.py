"""Foundation's scenario classes as shim environments.

In Foundation a scenario is a class, and ``CovidAndEconomyEnvironment(**config)``
(the WarpDrive tutorial's way) builds an environment as
``make_env_instance("CovidAndEconomySimulation", **config)`` does. Each class
here is a ``FoundationEnv`` bound to one registered jaxecon scenario, under
Foundation's class name; the module-layout files
(``jaxecon.foundation.scenarios.covid19.covid19_env`` and the others)
re-export them.
"""

from __future__ import annotations

from jaxecon.foundation.env import FoundationEnv


class _ScenarioEnv(FoundationEnv):
    """A ``FoundationEnv`` whose scenario is fixed by the class's ``name``.

    Args:
        **kwargs: Foundation's scenario, component and ``BaseEnvironment``
            keyword arguments (see ``make_env_instance``), without
            ``scenario_name``.
    Raises:
        as ``make_env_instance``.
    """

    name = ""

    def __init__(self, **kwargs):
        FoundationEnv.__init__(self, self.name, **kwargs)


class LayoutFromFile(_ScenarioEnv):
    """``layout_from_file/simple_wood_and_stone`` (Foundation's
    ``scenarios/simple_wood_and_stone/layout_from_file.py``)."""

    name = "layout_from_file/simple_wood_and_stone"


class SplitLayout(_ScenarioEnv):
    """``split_layout/simple_wood_and_stone`` (``layout_from_file.py``)."""

    name = "split_layout/simple_wood_and_stone"


class Uniform(_ScenarioEnv):
    """``uniform/simple_wood_and_stone`` (``dynamic_layout.py``)."""

    name = "uniform/simple_wood_and_stone"


class MultiZone(_ScenarioEnv):
    """``multi_zone/simple_wood_and_stone`` (``dynamic_layout.py``)."""

    name = "multi_zone/simple_wood_and_stone"


class Quadrant(_ScenarioEnv):
    """``quadrant/simple_wood_and_stone`` (``dynamic_layout.py``)."""

    name = "quadrant/simple_wood_and_stone"


class OneStepEconomy(_ScenarioEnv):
    """``one-step-economy`` (``scenarios/one_step_economy/one_step_economy.py``)."""

    name = "one-step-economy"


class CovidAndEconomyEnvironment(_ScenarioEnv):
    """``CovidAndEconomySimulation`` (``scenarios/covid19/covid19_env.py``)."""

    name = "CovidAndEconomySimulation"
