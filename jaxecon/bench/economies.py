"""The benchmark's named economies: ``--economies`` name -> Foundation env config maker.

- ``default``: the economy of ``jaxecon run``, Foundation's canonical
  Gather-Trade-Build with taxes (4 agents, 25x25 quadrant map);
- ``gather_build``: the same with only Build and Gather;
- ``uniform10``: the canonical components, 10 agents, random 25x25 layout;
- ``gtb100``: the canonical components, 100 agents, random 40x40 layout;
- ``covid19``: the COVID-19 and economy scenario (51 US states), where
  installed: Foundation's config (``default_covid_config``), random actions.

The configs themselves are in ``jaxecon.configs``.
"""

from __future__ import annotations

from jaxecon.configs import default_config, gather_build_config, gtb100_config, uniform10_config

__all__ = ["DEFAULT_ECONOMIES", "ECONOMIES", "economy_makers"]

#: Economy names accepted by ``--economies`` (``covid19`` when the scenario is installed).
ECONOMIES = ("default", "gather_build", "uniform10", "gtb100", "covid19")
#: Economies measured when ``--economies`` is not given.
DEFAULT_ECONOMIES = ("default", "gtb100", "covid19")


def _covid_config_maker():
    """``default_covid_config`` when this jaxecon has the COVID-19 scenario, else None."""
    try:
        from jaxecon.scenarios.covid19.config import default_covid_config
    except ImportError:
        return None
    return default_covid_config


def economy_makers() -> dict:
    """``{name: () -> env config dict}`` for the economies of ``ECONOMIES`` this installation has."""
    makers = {
        "default": default_config,
        "gather_build": gather_build_config,
        "uniform10": uniform10_config,
        "gtb100": gtb100_config,
    }
    covid = _covid_config_maker()
    if covid is not None:
        makers["covid19"] = covid
    return makers
