"""Foundation's ``scenarios/covid19/covid19_env.py`` path: ``CovidAndEconomyEnvironment``.

``CovidAndEconomyEnvironment(**config)`` builds the shim environment of
jaxecon's ``CovidAndEconomySimulation`` scenario. jaxecon needs no activation
code (Foundation's ``verify_activation_code`` runs on import there).
"""

from jaxecon.core.registry import scenario_registry
from jaxecon.foundation.scenario_envs import CovidAndEconomyEnvironment

__all__ = ["CovidAndEconomyEnvironment", "scenario_registry"]
