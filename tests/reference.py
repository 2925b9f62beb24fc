"""Test-only helpers for differential tests against the reference simulator.

The reference is Salesforce's Foundation, ``ai-economist==1.7.1`` (installed
with ``--no-deps``).  Nothing here imports jaxecon.  The helpers:

- :func:`load_foundation` imports ``ai_economist.foundation`` under numpy 2
  (restores the removed aliases ``np.int``/``np.float``/``np.bool``, which the
  reference still uses) and swallows the GPU-probe prints it emits on import.
- :func:`require_foundation` does the same but skips the calling test (or test
  module) when the reference is not installed, like ``pytest.importorskip``.
- :data:`CANONICAL_CONFIG`, :data:`GATHER_BUILD_CONFIG`,
  :data:`UNIFORM10_CONFIG` are env config dicts (the dict Foundation users pass
  to ``foundation.make_env_instance(**config)``).  Treat them as read-only;
  :func:`make_reference_env` deep-copies before use.
- :func:`make_reference_env` builds a reference env from any such config,
  the COVID-19 scenario (``CovidAndEconomySimulation``) included: it is built
  past its activation-code gate, on jaxecon's copy of its data
  (:data:`COVID_DATA_DIR`; the pip package's data folder is empty).
- :func:`random_valid_actions` samples a uniformly random mask-valid action
  for every agent, planner included.
- :func:`reference_steps_per_second` measures the reference's speed.

See /work/shared/reference/FOUNDATION_BEHAVIOUR.md §9 (canonical config,
action index map, observation layout) and §11 (reference speed).
"""

from __future__ import annotations

import contextlib
import copy
import io
import pathlib
import random
import sys
import time

import numpy as np

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
#: (= tutorials/rllib/phase2/config.yaml, FOUNDATION_BEHAVIOUR.md §9).
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

#: The canonical Gather-Trade-Build env config (FOUNDATION_BEHAVIOUR.md §9),
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
#: scenario kwargs (FOUNDATION_BEHAVIOUR.md §11, configuration (b)); the
#: layout-file-only kwargs are dropped, the scenario's own defaults apply to
#: the rest (resource coverage, regeneration, clumpiness, ...).
UNIFORM10_CONFIG: dict = {
    k: v
    for k, v in CANONICAL_CONFIG.items()
    if k not in ("env_layout_file", "fixed_four_skill_and_loc")
}
UNIFORM10_CONFIG.update(scenario_name="uniform/simple_wood_and_stone", n_agents=10)

#: Short names used by benchmarks/reference_speed.py.
CONFIGS = {
    "canonical": CANONICAL_CONFIG,
    "gather_build": GATHER_BUILD_CONFIG,
    "uniform10": UNIFORM10_CONFIG,
}

#: Foundation's COVID-19 and economy scenario (``scenarios/covid19/covid19_env.py``).
COVID_SCENARIO = "CovidAndEconomySimulation"

#: jaxecon's copy of the COVID-19 data folder (``real_world_data.npz``,
#: ``model_constants.json``, ``fitted_params.json``), which the reference reads
#: when a config leaves ``path_to_data_and_fitted_params`` empty: the pip
#: package ships its own ``data_and_fitted_params/`` empty. Located from this
#: file (a source checkout) so that this module does not import jaxecon; the
#: same folder as ``jaxecon.scenarios.covid19.DEFAULT_DATA_DIR``.
COVID_DATA_DIR = str(
    pathlib.Path(__file__).resolve().parents[1] / "jaxecon" / "scenarios" / "covid19" / "data_and_fitted_params"
)

# --------------------------------------------------------------------------
# Importing the reference
# --------------------------------------------------------------------------

_FOUNDATION = None


def load_foundation():
    """Import and return ``ai_economist.foundation``.

    Sets ``np.int``, ``np.float`` and ``np.bool`` to the Python builtins if
    numpy lacks them (numpy >= 1.24 removed them; the reference uses them),
    and redirects stdout during the import to silence the reference's
    "N GPUs are available" probe prints.

    Raises:
        ImportError: if ``ai_economist`` (or one of its runtime dependencies)
            is not installed.
    """
    global _FOUNDATION
    if _FOUNDATION is not None:
        return _FOUNDATION
    for name, alias in (("int", int), ("float", float), ("bool", bool)):
        if name not in np.__dict__:
            setattr(np, name, alias)
    with contextlib.redirect_stdout(io.StringIO()):
        from ai_economist import foundation
    _FOUNDATION = foundation
    return foundation


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


def make_reference_env(config: dict, seed: int | None = 1):
    """Build a reference env from a config dict (deep-copied first).

    ``seed`` (> 0, or None to leave the global streams alone) seeds numpy's
    and Python's global RNGs, which is all the reference uses, *before*
    construction.  The env is not reset.  A config of :data:`COVID_SCENARIO`
    is built by :func:`_make_covid_reference_env`.

    Raises:
        ValueError: ``seed`` <= 0.
    """
    foundation = load_foundation()
    if seed is not None:
        seed = int(seed)
        if seed <= 0:  # BaseEnvironment.seed asserts seed > 0 (quirk Q11)
            raise ValueError(f"seed must be > 0, got {seed}")
        np.random.seed(seed)  # == BaseEnvironment.seed(seed)
        random.seed(seed)
    cfg = copy.deepcopy(dict(config))
    if cfg.get("scenario_name") == COVID_SCENARIO:
        return _make_covid_reference_env(foundation, cfg)
    return foundation.make_env_instance(**cfg)


def _make_covid_reference_env(foundation, cfg: dict):
    """The reference COVID-19 env of ``cfg`` (modified in place), made usable here.

    Three test-only workarounds, none of which changes the dynamics:

    - the scenario's constructor calls ``verify_activation_code()``, which
      asks for a code on stdin; it is replaced by a no-op in the reference's
      ``covid19_env`` module for the duration of the construction only;
    - an empty ``path_to_data_and_fitted_params`` (the default) becomes
      :data:`COVID_DATA_DIR`;
    - with ``use_real_world_policies``, ``world.real_world_subsidy`` (float
      ``[episode_length, 1]``) is reshaped to ``[episode_length]``:
      ``FederalGovernmentSubsidy`` stores its row ``t - 1``, a shape-(1,)
      array, into a scalar slot, which numpy 2 rejects.

    The construction's prints ("Loading fit parameters ...") are swallowed.
    """
    module = sys.modules["ai_economist.foundation.scenarios.covid19.covid19_env"]
    if cfg.get("path_to_data_and_fitted_params", "") == "":
        cfg["path_to_data_and_fitted_params"] = COVID_DATA_DIR
    gate = module.verify_activation_code
    module.verify_activation_code = lambda: None
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            env = foundation.make_env_instance(**cfg)
    finally:
        module.verify_activation_code = gate
    if cfg.get("use_real_world_policies"):
        env.world.real_world_subsidy = np.asarray(env.world.real_world_subsidy).reshape(-1)
    return env


# --------------------------------------------------------------------------
# Random valid actions
# --------------------------------------------------------------------------


def flat_action_mask(agent, mask) -> np.ndarray:
    """The agent's action mask as Foundation's flattened float vector.

    ``mask`` is ``obs[str(agent.idx)]["action_mask"]``: already flat (with
    ``flatten_masks=True``) or a dict ``{subspace_name: mask}`` (with
    ``flatten_masks=False``), which is flattened like
    ``BaseAgent.flatten_masks``: single-action mode ``[1] + masks...``,
    multi-action mode ``[1] + mask`` per subspace.
    """
    if not isinstance(mask, dict):
        return np.asarray(mask, dtype=np.float32).reshape(-1)
    if agent.multi_action_mode and getattr(agent, "_passive_multi_action_agent", False):
        return np.ones(1, np.float32)
    parts = [] if agent.multi_action_mode else [np.ones(1)]
    for name in agent._action_names:
        if agent.multi_action_mode:
            parts.append(np.ones(1))
        parts.append(np.asarray(mask[name], dtype=np.float64).reshape(-1))
    return np.concatenate(parts).astype(np.float32)


def _choice_nonzero(mask: np.ndarray, rng: np.random.Generator) -> int:
    valid = np.flatnonzero(mask)
    if valid.size == 0:
        raise ValueError("action mask has no valid entry")
    return int(valid[rng.integers(valid.size)])


def _agent_slice(mask, i: int):
    """Agent ``i``'s entry of a collated mask (array, or dict of arrays, agents on the last axis)."""
    if isinstance(mask, dict):
        return {k: np.asarray(v)[..., i] for k, v in mask.items()}
    return np.asarray(mask)[..., i]


def random_valid_actions(obs: dict, env, rng: np.random.Generator) -> dict:
    """A uniformly random mask-valid action for every agent, planner included.

    Args:
        obs: the last observation dict returned by ``env.reset()`` /
            ``env.step()``, keyed ``"0".."n-1", "p"``, each entry holding
            ``"action_mask"``; or, with ``collate_agent_step_and_reset_data``
            (e.g. the COVID-19 scenario), keyed ``"a"``, ``"p"``, the agents'
            masks stacked along the last axis of ``obs["a"]["action_mask"]``.
        env: the live reference environment that produced ``obs``.
        rng: a ``numpy.random.Generator`` (never the reference's global
            ``np.random`` stream, so sampling does not perturb the env).

    Returns:
        ``{str(agent.idx): action}`` for every agent in ``env.all_agents``:
        single-action mode -> ``int`` index, drawn uniformly from the nonzero
        entries of the flat mask (index 0, NO-OP, is always valid);
        multi-action mode -> ``list[int]``, one local index per subspace,
        drawn uniformly from the nonzero entries of that subspace's
        ``[1 (NO-OP), mask...]`` block (a passive planner gets ``[0]``).
    """
    actions = {}
    collated = "a" in obs and "0" not in obs
    for agent in env.all_agents:
        key = str(agent.idx)
        if collated and key != "p":
            raw = _agent_slice(obs["a"]["action_mask"], int(agent.idx))
        else:
            raw = obs[key]["action_mask"]
        mask = flat_action_mask(agent, raw)
        if agent.multi_action_mode:
            dims = np.asarray(agent.action_spaces, dtype=np.int64).reshape(-1)
            if int(dims.sum()) != mask.size:
                raise ValueError(
                    f"agent {key}: mask length {mask.size} != sum of "
                    f"subspace dims {dims.tolist()}"
                )
            bounds = np.cumsum(dims)[:-1]
            actions[key] = [
                _choice_nonzero(block, rng) for block in np.split(mask, bounds)
            ]
        else:
            if mask.size != int(agent.action_spaces):
                raise ValueError(
                    f"agent {key}: mask length {mask.size} != action_spaces "
                    f"{int(agent.action_spaces)}"
                )
            actions[key] = _choice_nonzero(mask, rng)
    return actions


# --------------------------------------------------------------------------
# Speed
# --------------------------------------------------------------------------


def reference_steps_per_second(config: dict, n_steps: int = 1000, seed: int = 1) -> dict:
    """Measure the reference's speed on ``config`` with random valid actions.

    Seeds the reference's global RNGs with ``seed`` (> 0) and the action
    sampler with ``np.random.default_rng(seed)``, builds and resets the env
    (not timed), then runs ``n_steps`` steps, resetting whenever ``done``.
    Dense logging is forced off (``dense_log_frequency=None``).

    Returns a dict with
        ``env_steps_per_s``: n_steps / time spent inside ``env.step`` only;
        ``loop_steps_per_s``: n_steps / wall time of the whole loop
        (action sampling + ``env.step`` + resets after ``done``);
        ``n_steps``, ``n_resets``, ``mean_step_ms``, ``mean_reset_ms``
        (NaN when no reset happened), ``n_agents``.
    All times are ``time.perf_counter`` seconds.
    """
    n_steps = int(n_steps)
    if n_steps < 1:
        raise ValueError(f"n_steps must be >= 1, got {n_steps}")
    cfg = dict(config)
    cfg["dense_log_frequency"] = None
    env = make_reference_env(cfg, seed=seed)
    rng = np.random.default_rng(seed)
    obs = env.reset()

    step_time = 0.0
    reset_time = 0.0
    n_resets = 0
    clock = time.perf_counter
    loop_start = clock()
    for _ in range(n_steps):
        actions = random_valid_actions(obs, env, rng)
        t0 = clock()
        obs, _rew, done, _info = env.step(actions)
        step_time += clock() - t0
        if done["__all__"]:
            t0 = clock()
            obs = env.reset()
            reset_time += clock() - t0
            n_resets += 1
    loop_time = clock() - loop_start

    return {
        "env_steps_per_s": n_steps / step_time,
        "loop_steps_per_s": n_steps / loop_time,
        "n_steps": n_steps,
        "n_resets": n_resets,
        "mean_step_ms": 1e3 * step_time / n_steps,
        "mean_reset_ms": 1e3 * reset_time / n_resets if n_resets else float("nan"),
        "n_agents": int(cfg["n_agents"]),
    }
