"""Test-only helpers for differential tests against the reference simulator.

The reference is Salesforce's Foundation, ``ai-economist==1.7.1`` (installed
with ``--no-deps``).  Building and driving it lives in the package, in
``jaxecon.interop.reference`` (re-exported here): :func:`load_foundation`
(the numpy-2 alias shim), :func:`make_reference_env` (the COVID-19 scenario
built past its activation-code gate, on :data:`COVID_DATA_DIR`),
:func:`flat_action_mask`, :func:`random_valid_actions` and
:func:`reference_steps_per_second`.  Defined here:

- :func:`require_foundation` imports the reference but skips the calling
  test (or test module) when it is not installed, like ``pytest.importorskip``.
- :data:`CANONICAL_CONFIG`, :data:`GATHER_BUILD_CONFIG`,
  :data:`UNIFORM10_CONFIG` are env config dicts (the dict Foundation users pass
  to ``foundation.make_env_instance(**config)``).  Treat them as read-only;
  :func:`make_reference_env` deep-copies before use.

See docs/testing.md (the canonical economy, its action index map and
observation layout, and the 10-agent configuration).
"""

from __future__ import annotations

from jaxecon.interop.reference import (
    COVID_DATA_DIR,
    COVID_SCENARIO,
    flat_action_mask,
    load_foundation,
    make_reference_env,
    random_valid_actions,
    reference_steps_per_second,
)

__all__ = [
    "CANONICAL_CONFIG",
    "GATHER_BUILD_CONFIG",
    "UNIFORM10_CONFIG",
    "CONFIGS",
    "COVID_SCENARIO",
    "COVID_DATA_DIR",
    "load_foundation",
    "require_foundation",
    "make_reference_env",
    "flat_action_mask",
    "random_valid_actions",
    "reference_steps_per_second",
]

# --------------------------------------------------------------------------
# Configs
# --------------------------------------------------------------------------

#: Component list of the canonical Gather-Trade-Build economy, in order
#: (= tutorials/rllib/phase2/config.yaml; docs/testing.md, the canonical economy).
_BUILD = {
    "Build": {
        "payment": 10,
        "payment_max_skill_multiplier": 3,
        "skill_dist": "pareto",
        "build_labor": 10,
    }
}
_CDA = {
    "ContinuousDoubleAuction": {
        "max_bid_ask": 10,
        "max_num_orders": 5,
        "order_duration": 50,
        "order_labor": 0.25,
    }
}
_GATHER = {
    "Gather": {
        "move_labor": 1,
        "collect_labor": 1,
        "skill_dist": "pareto",
    }
}
_TAX = {
    "PeriodicBracketTax": {
        "bracket_spacing": "us-federal",
        "disable_taxes": False,
        "period": 100,
        "rate_disc": 0.05,
        "tax_annealing_schedule": [-100, 0.001],
        "tax_model": "model_wrapper",
        "usd_scaling": 1000,
    }
}

#: The canonical Gather-Trade-Build env config (docs/testing.md, the canonical economy),
#: dense logging off.  4 agents on the 25x25 quadrant layout, 1000 steps.
CANONICAL_CONFIG: dict = {
    "scenario_name": "layout_from_file/simple_wood_and_stone",
    "components": [_BUILD, _CDA, _GATHER, _TAX],
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

#: Same as the canonical config with only the Build and Gather components
#: (same kwargs) -- jaxecon's first target.  Mobile mask: 6 entries
#: (NO-OP, Build, Gather left/right/up/down); the planner is passive.
GATHER_BUILD_CONFIG: dict = {
    **CANONICAL_CONFIG,
    "components": [_BUILD, _GATHER],
}

#: uniform/simple_wood_and_stone with 10 agents, the canonical components and
#: scenario kwargs (docs/testing.md, the 10-agent configuration); the
#: layout-file-only kwargs are dropped, the scenario's own defaults apply to
#: the rest (resource coverage, regeneration, clumpiness, ...).
UNIFORM10_CONFIG: dict = {
    k: v
    for k, v in CANONICAL_CONFIG.items()
    if k not in ("env_layout_file", "fixed_four_skill_and_loc")
}
UNIFORM10_CONFIG.update(scenario_name="uniform/simple_wood_and_stone", n_agents=10)

#: Short names of the configs above.
CONFIGS = {
    "canonical": CANONICAL_CONFIG,
    "gather_build": GATHER_BUILD_CONFIG,
    "uniform10": UNIFORM10_CONFIG,
}

# --------------------------------------------------------------------------
# Importing the reference
# --------------------------------------------------------------------------


def require_foundation():
    """Like :func:`load_foundation`, but skip the current test if missing.

    Works inside a test function, a fixture, or at module level
    (``foundation = require_foundation()`` at the top of a test module skips
    the whole module), like ``pytest.importorskip``.
    """
    try:
        return load_foundation()
    except ImportError as exc:  # pragma: no cover - depends on the install
        import pytest

        pytest.skip(
            f"ai-economist (the reference) is not importable: {exc}",
            allow_module_level=True,
        )
