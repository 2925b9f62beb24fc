"""COVID-19 and the economy (Foundation's ``covid19`` scenario) on the recorded US data."""

from jaxecon.scenarios.covid19.config import default_covid_config, real_world_policies_covid_config
from jaxecon.scenarios.covid19.covid19_env import CovidAndEconomySimulation
from jaxecon.scenarios.covid19.types import CovidParams, CovidState, CovidStaticSpec
from jaxecon.scenarios.covid19.data import DEFAULT_DATA_DIR, CovidData, load_covid_data

__all__ = [
    "CovidAndEconomySimulation",
    "CovidData",
    "CovidParams",
    "CovidState",
    "CovidStaticSpec",
    "DEFAULT_DATA_DIR",
    "default_covid_config",
    "load_covid_data",
    "real_world_policies_covid_config",
]
