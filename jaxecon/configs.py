"""The named economies: Foundation env configs (the dict passed to ``make_env_instance``).

``ECONOMIES`` is the one table of them, name -> :class:`NamedEconomy` (a maker of
a fresh config and a one-line description); ``economy_config(name)`` builds
one. ``jaxecon run --config NAME``, ``jaxecon bench --economies`` (and the
subset it measures by default), a training config's ``env: NAME`` and the
tests' reference configs read it.

- ``default`` (``DEFAULT_ECONOMY`` / ``default_config()``): Foundation's
  canonical Gather-Trade-Build economy with taxes (4 agents, 25x25 quadrant
  map, 1000 steps); what ``jaxecon run`` simulates by default.
- ``gather_build`` (``gather_build_config()``): the same with only Build and
  Gather.
- ``uniform10``, ``gtb100`` (``uniform10_config()``, ``gtb100_config()``):
  the canonical components on a random ``uniform/simple_wood_and_stone``
  layout with 10 agents (25x25) and 100 agents (40x40).
- ``covid19``: Foundation's COVID-19 and economy config
  (``covid19_config()``: ``jaxecon.scenarios.covid19.default_covid_config``).
- ``covid19_real_world_policies``: the same replaying the recorded policies
  (``covid19_real_world_policies_config()``).
- ``builders_and_traders`` (``builders_and_traders_config()``): the canonical
  economy with two mobile-agent types (``mobile_agent_groups``): 2 builders
  (Build and Gather, Pareto skills) and 2 traders (the double auction and
  Gather, no building skill, Pareto gathering skill), and the planner.
- ``gather_build_no_planner`` (``gather_build_no_planner_config()``):
  ``gather_build`` with no planner (``n_planners=0``).
- ``phase1`` (``phase1_config()``): the economy to train mobile agents from
  scratch, Foundation's phase 1 (tutorials/rllib phase1 config.yaml): the
  canonical economy with taxes disabled and the labor cost annealed in
  (``energy_warmup_method: auto``), 200-step episodes. The README's env line
  for other people's RL code builds it.

The last two use jaxecon's agent groups, which Foundation's object API (the
shim, the reference simulator) cannot express: ``NamedEconomy.foundation_api`` is
False for them.

Build any of them with ``jaxecon.make_from_config(cfg)``. Each maker returns
a fresh copy. Importing this module loads no JAX (``jaxecon --help`` lists
the economies); the makers import what they need when called.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable


__all__ = [
    "DEFAULT_ECONOMY",
    "ECONOMIES",
    "NamedEconomy",
    "covid19_config",
    "covid19_real_world_policies_config",
    "default_config",
    "builders_and_traders_config",
    "economy_config",
    "gather_build_config",
    "gather_build_no_planner_config",
    "gtb100_config",
    "PHASE1_WARMUP_CONSTANT",
    "phase1_config",
    "uniform10_config",
]

#: Foundation's canonical Gather-Trade-Build economy (tutorials/rllib
#: phase2 config.yaml, the one the differential tests use): 4 agents on the
#: 25x25 quadrant map, 1000 steps. ``default_config()`` keeps only the
#: components jaxecon implements.
DEFAULT_ECONOMY: dict = {
    "scenario_name": "layout_from_file/simple_wood_and_stone",
    "components": [
        {"Build": {"payment": 10, "payment_max_skill_multiplier": 3,
                   "skill_dist": "pareto", "build_labor": 10}},
        {"ContinuousDoubleAuction": {"max_bid_ask": 10, "max_num_orders": 5,
                                     "order_duration": 50, "order_labor": 0.25}},
        {"Gather": {"move_labor": 1, "collect_labor": 1, "skill_dist": "pareto"}},
        {"PeriodicBracketTax": {"bracket_spacing": "us-federal", "disable_taxes": False,
                                "period": 100, "rate_disc": 0.05,
                                "tax_annealing_schedule": [-100, 0.001],
                                "tax_model": "model_wrapper", "usd_scaling": 1000}},
    ],
    "env_layout_file": "quadrant_25x25_20each_30clump.txt",
    "n_agents": 4,
    "world_size": [25, 25],
    "episode_length": 1000,
    "fixed_four_skill_and_loc": True,
    "starting_agent_coin": 0,
    "isoelastic_eta": 0.23,
    "energy_cost": 0.21,
    "energy_warmup_constant": 0,
    "planner_gets_spatial_info": False,
    "planner_reward_type": "coin_eq_times_productivity",
    "multi_action_mode_agents": False,
    "multi_action_mode_planner": True,
    "flatten_observations": True,
    "flatten_masks": True,
    "dense_log_frequency": None,
}


def _component_name(entry) -> str:
    if isinstance(entry, dict):
        return next(iter(entry))
    return entry[0]


def default_config() -> dict:
    """A fresh copy of ``DEFAULT_ECONOMY`` with the components jaxecon lacks removed.

    A component stays iff ``jaxecon.component_registry.has(name)``.
    """
    from jaxecon.core.registry import component_registry  # loads JAX: not at import

    cfg = copy.deepcopy(DEFAULT_ECONOMY)
    cfg["components"] = [
        c for c in cfg["components"] if component_registry.has(_component_name(c))
    ]
    return cfg


def gather_build_config() -> dict:
    """``DEFAULT_ECONOMY`` with only its Build and Gather components (same kwargs)."""
    cfg = copy.deepcopy(DEFAULT_ECONOMY)
    cfg["components"] = [
        c for c in cfg["components"] if _component_name(c) in ("Build", "Gather")
    ]
    return cfg


def gtb100_config() -> dict:
    """The canonical components and scenario kwargs with 100 agents on a 40x40
    ``uniform/simple_wood_and_stone`` map (the benchmark's large economy; the
    layout-file-only kwargs are dropped, the scenario's defaults apply to the
    rest: resource coverage, clumpiness, regeneration)."""
    cfg = default_config()
    for k in ("env_layout_file", "fixed_four_skill_and_loc"):
        cfg.pop(k, None)
    cfg.update(scenario_name="uniform/simple_wood_and_stone", n_agents=100, world_size=[40, 40])
    return cfg


def uniform10_config() -> dict:
    """The canonical economy on a random 25x25 ``uniform`` layout with 10 agents
    (the reference's configuration (b) of its speed measurements)."""
    cfg = gtb100_config()
    cfg.update(n_agents=10, world_size=[25, 25])
    return cfg


def covid19_config() -> dict:
    """``jaxecon.scenarios.covid19.default_covid_config()``: Foundation's COVID-19 config."""
    from jaxecon.scenarios.covid19.config import default_covid_config  # the scenarios load JAX

    return default_covid_config()


def covid19_real_world_policies_config() -> dict:
    """``jaxecon.scenarios.covid19.real_world_policies_covid_config()``: ``covid19_config()``
    replaying the recorded policies."""
    from jaxecon.scenarios.covid19.config import real_world_policies_covid_config

    return real_world_policies_covid_config()


def builders_and_traders_config() -> dict:
    """``default_config()`` with two mobile-agent types: agents 0-1 are builders
    (Build and Gather; Build's Pareto skill), agents 2-3 traders (the double
    auction and Gather; no building skill, a Pareto gathering skill)."""
    cfg = default_config()
    cfg["mobile_agent_groups"] = [
        {"name": "builders", "n_agents": 2, "components": ["Build", "Gather"],
         "skill_dist": {"Gather": "none"}},
        {"name": "traders", "n_agents": 2, "components": ["ContinuousDoubleAuction", "Gather"],
         "skill_dist": {"Build": "none"}},
    ]
    cfg["fixed_four_skill_and_loc"] = False  # it ranks every agent by building skill
    return cfg


def gather_build_no_planner_config() -> dict:
    """``gather_build_config()`` with no planner (``n_planners=0``)."""
    return {**gather_build_config(), "n_planners": 0}


#: ``phase1_config()``'s ``energy_warmup_constant``. Foundation's phase 1 uses
#: 10000 over a training run of tens of millions of steps; the "auto" method
#: counts, per economy and across its episodes, the steps whose mean
#: mobile-agent reward is positive (at labor weight 0 those are the steps
#: where some agent earns coin), so the weight ``1 - exp(-count / 2000)``
#: passes 0.95 after 6000 such steps: within a 1M-step budget of 16 vmapped
#: economies (62,500 steps each) once the agents earn on about one step in ten.
#: Measured: 0.92 to 0.99 at the end of the third-party benchmarks' 1M-step
#: runs (``benchmarks/RESULTS.md``).
PHASE1_WARMUP_CONSTANT = 2000


def phase1_config() -> dict:
    """``default_config()`` set up as Foundation's phase 1, for agents trained from scratch.

    Foundation's phase 1 (tutorials/rllib phase1 config.yaml) with jaxecon's
    choices for a short budget:

    - the PeriodicBracketTax component with ``disable_taxes: True`` (the
      planner's actions change nothing);
    - ``energy_warmup_method: "auto"``, ``energy_warmup_constant:
      PHASE1_WARMUP_CONSTANT`` (2000): the labor cost is ``energy_cost`` (0.21)
      times ``1 - exp(-x / 2000)``, ``x`` the steps, over all of an economy's
      episodes, whose mean mobile-agent reward was positive. It starts at 0,
      so moving and gathering cost nothing until the agents earn; the count
      carries over resets (``reset(..., prev_state=)``, which the fronts'
      auto-reset and ``AutoResetWrapper`` call), never across a fresh
      ``reset(key, params)``;
    - ``episode_length: 200`` (Foundation's: 1000): more episode ends per
      training step for scripts that bootstrap nothing at a time limit.

    A fresh ``reset(key, params)`` starts at labor weight 0, where NO-OP and
    moving both cost nothing: evaluate a trained policy at the full labor cost
    with ``phase1_config() | {"energy_warmup_constant": 0}``.
    """
    cfg = default_config()
    for entry in cfg["components"]:
        if _component_name(entry) == "PeriodicBracketTax":
            entry["PeriodicBracketTax"]["disable_taxes"] = True
    cfg.update(energy_warmup_method="auto", energy_warmup_constant=PHASE1_WARMUP_CONSTANT, episode_length=200)
    return cfg


@dataclass(frozen=True)
class NamedEconomy:
    """One named economy of ``ECONOMIES``.

    Attributes:
        make: ``make() -> dict``, a fresh Foundation env config (with ``scenario_name``).
        description: one line saying what the economy is.
        bench_default: ``jaxecon bench`` measures it when ``--economies`` is not given.
        foundation_api: Foundation's object API (the shim, the reference
            simulator) can run it: False for declared agent groups.
    """

    make: Callable[[], dict]
    description: str
    bench_default: bool = False
    foundation_api: bool = True


#: The named economies, name -> :class:`NamedEconomy`, in the order the CLI lists them.
ECONOMIES: dict = {
    "default": NamedEconomy(
        default_config,
        "Foundation's canonical Gather-Trade-Build economy with taxes (4 agents, 25x25 "
        "quadrant map, 1000 steps)",
        bench_default=True,
    ),
    "gather_build": NamedEconomy(
        gather_build_config,
        "the canonical economy with only its Build and Gather components",
    ),
    "uniform10": NamedEconomy(
        uniform10_config,
        "the canonical components, 10 agents on a random 25x25 uniform layout",
    ),
    "gtb100": NamedEconomy(
        gtb100_config,
        "the canonical components, 100 agents on a random 40x40 uniform layout",
        bench_default=True,
    ),
    "covid19": NamedEconomy(
        covid19_config,
        "Foundation's COVID-19 and economy config (51 US states + the federal government, "
        "540 days from 2020-03-22)",
        bench_default=True,
    ),
    "covid19_real_world_policies": NamedEconomy(
        covid19_real_world_policies_config,
        "covid19 with use_real_world_policies=True: the recorded state stringency levels and "
        "federal direct payments are replayed (actions are ignored) while the fitted model "
        "simulates infections, deaths and unemployment; 437 steps (days), the length of the record",
    ),
    "builders_and_traders": NamedEconomy(
        builders_and_traders_config,
        "the canonical economy with two mobile-agent types: 2 builders (Build, Gather) and 2 traders "
        "(the double auction, Gather), each with its own skills, and the planner",
        foundation_api=False,
    ),
    "gather_build_no_planner": NamedEconomy(
        gather_build_no_planner_config,
        "gather_build with no planner",
        foundation_api=False,
    ),
    "phase1": NamedEconomy(
        phase1_config,
        "Foundation's phase 1, to train agents from scratch: the canonical economy with taxes disabled, "
        "the labor cost annealed in as the agents earn (auto warm-up, constant 2000), 200-step episodes",
    ),
}


def economy_config(name: str) -> dict:
    """A fresh env config of the economy ``name`` (a key of ``ECONOMIES``).

    Raises:
        ValueError: an unknown ``name``; the message lists the economies.
    """
    if not isinstance(name, str) or name not in ECONOMIES:
        raise ValueError(f"economy must be one of {list(ECONOMIES)}, got {name!r}")
    return ECONOMIES[name].make()
