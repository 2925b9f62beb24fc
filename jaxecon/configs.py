"""Built-in economies as Foundation env configs (the dict passed to ``make_env_instance``).

- ``DEFAULT_ECONOMY`` / ``default_config()``: Foundation's canonical
  Gather-Trade-Build economy with taxes (4 agents, 25x25 quadrant map, 1000
  steps); what ``jaxecon run`` simulates by default.
- ``gather_build_config()``: the same with only Build and Gather.
- ``uniform10_config()``, ``gtb100_config()``: the canonical components on a
  random ``uniform/simple_wood_and_stone`` layout with 10 agents (25x25) and
  100 agents (40x40): the benchmark's larger economies.

Build any of them with ``jaxecon.make_from_config(cfg)``. Each function
returns a fresh copy.
"""

from __future__ import annotations

import copy

from jaxecon.core.registry import component_registry

__all__ = [
    "DEFAULT_ECONOMY",
    "default_config",
    "gather_build_config",
    "gtb100_config",
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
