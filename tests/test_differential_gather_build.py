"""Step-by-step parity with the reference on deterministic Gather + Build economies.

After ``state_from_foundation`` copies the reference's state after reset, both
implementations receive the same actions; observations (flat vectors, map
windows, idx maps), action masks, rewards, done and metrics must agree at every
step. The steps are made deterministic as docs/testing.md (deterministic steps) says:
regeneration probability 0 or 1, Gather without bonus (skill_dist "none"), and
mask-valid actions with no two agents moving onto the same tile.
Runs under ``jax.enable_x64`` so that coin, labor and utilities are float64 on
both sides.
"""

from __future__ import annotations

import copy

import jax
import numpy as np
import pytest

import jaxecon
from jaxecon.interop import state_from_foundation

from parity import DETERMINISTIC_BUILD, DETERMINISTIC_GATHER, deconflict_moves, to_jax_actions
from reference import GATHER_BUILD_CONFIG, make_reference_env, random_valid_actions
from jaxecon.foundation.formats import planner_entries

N_STEPS = 300


def _config(regen: float, **overrides):
    cfg = copy.deepcopy(GATHER_BUILD_CONFIG)
    cfg["components"] = [copy.deepcopy(DETERMINISTIC_BUILD), copy.deepcopy(DETERMINISTIC_GATHER)]
    cfg["resource_regen_prob"] = regen
    cfg["episode_length"] = N_STEPS
    cfg.update(overrides)
    return cfg


def _compare_obs(obs, ref_obs, n):
    obs = {**obs, "p": planner_entries(obs["p"], n)}  # Foundation's p<i> entries
    for i in range(n):
        ref = ref_obs[str(i)]
        for k, v in ref.items():
            np.testing.assert_allclose(
                np.asarray(obs["a"][k][i]), np.asarray(v, dtype=np.float64), rtol=1e-6, atol=1e-7,
                err_msg=f"agent {i} obs {k}",
            )
        assert set(ref) == set(obs["a"]), (set(ref), set(obs["a"]))
    for k, v in ref_obs["p"].items():
        np.testing.assert_allclose(
            np.asarray(obs["p"][k]), np.asarray(v, dtype=np.float64), rtol=1e-6, atol=1e-7, err_msg=f"planner obs {k}"
        )
    assert set(ref_obs["p"]) == set(obs["p"])


def _run_parity(cfg, seed):
    rng = np.random.default_rng(seed)
    with jax.enable_x64(True):
        env = jaxecon.make_from_config(cfg)
        params = env.default_params
        ref_env = make_reference_env(cfg, seed=seed)
        ref_obs = ref_env.reset()
        state = state_from_foundation(env, ref_env, params)
        _compare_obs(jax.jit(env.observe)(state, params), ref_obs, env.n_agents)
        step = jax.jit(env.step)
        key = jax.random.key(seed)
        n_builds = 0
        for t in range(N_STEPS):
            actions = deconflict_moves(random_valid_actions(ref_obs, ref_env, rng), ref_env)
            ref_obs, ref_rew, ref_done, _ = ref_env.step(copy.deepcopy(actions))
            key, k = jax.random.split(key)
            obs, state, rew, done, info = step(k, state, to_jax_actions(actions, env), params)
            _compare_obs(obs, ref_obs, env.n_agents)
            np.testing.assert_allclose(
                np.asarray(rew["a"]), [ref_rew[str(i)] for i in range(env.n_agents)], rtol=1e-9, atol=1e-9,
                err_msg=f"step {t} agent rewards",
            )
            np.testing.assert_allclose(float(rew["p"]), ref_rew["p"], rtol=1e-9, atol=1e-9)
            assert bool(done) == ref_done["__all__"]
            n_builds = int(np.sum(np.asarray(state.components["Build"].n_builds)))
        metrics = {k: float(v) for k, v in env.metrics(state, params).items()}
        ref_metrics = ref_env.previous_episode_metrics
        assert set(metrics) == set(ref_metrics)
        for k, v in ref_metrics.items():
            np.testing.assert_allclose(metrics[k], v, rtol=1e-9, atol=1e-9, err_msg=k)
        np.testing.assert_array_equal(np.asarray(state.loc), [a.loc for a in ref_env.world.agents])
        return n_builds


@pytest.mark.reference
@pytest.mark.parametrize("regen", [0.0, 1.0])
def test_step_parity_fixed_four(regen):
    _run_parity(_config(regen), seed=3)


@pytest.mark.reference
def test_step_parity_full_observability_spatial_planner_and_houses():
    """Houses get built (walking into/around them), full-map obs, spatial planner obs."""
    cfg = _config(
        1.0,
        fixed_four_skill_and_loc=False,
        full_observability=True,
        planner_gets_spatial_info=True,
        env_layout_file="env-pure_and_mixed-15x15.txt",
        world_size=[15, 15],
        starting_agent_coin=5,
        planner_reward_type="inv_income_weighted_utility",
    )
    n_builds = _run_parity(cfg, seed=7)
    assert n_builds > 0, "the comparison should include steps where houses are built"


@pytest.mark.reference
def test_step_parity_multi_action_agents_unscaled():
    cfg = _config(
        0.0,
        multi_action_mode_agents=True,
        allow_observation_scaling=False,
        planner_reward_type="inv_income_weighted_coin_endowments",
        mobile_agent_observation_range=3,
    )
    _run_parity(cfg, seed=11)


@pytest.mark.reference
def test_load_foundation_state_into_the_shim():
    """The shim env continues from the reference's state: same obs and rewards."""
    from jaxecon import foundation
    from jaxecon.interop import load_foundation_state

    cfg = _config(0.0, episode_length=40)
    rng = np.random.default_rng(2)
    with jax.enable_x64(True):
        ref_env = make_reference_env(cfg, seed=2)
        ref_obs = ref_env.reset()
        for _ in range(15):  # move away from the reset state first
            ref_obs, *_ = ref_env.step(deconflict_moves(random_valid_actions(ref_obs, ref_env, rng), ref_env))
        env = foundation.make_env_instance(**copy.deepcopy(cfg))
        env.reset()
        load_foundation_state(env, ref_env)
        assert env.world.timestep == ref_env.world.timestep == 15
        for t in range(10):
            actions = deconflict_moves(random_valid_actions(ref_obs, ref_env, rng), ref_env)
            ref_obs, ref_rew, _, _ = ref_env.step(copy.deepcopy(actions))
            obs, rew, _, _ = env.step(copy.deepcopy(actions))
            for k in ref_obs:
                for f in ref_obs[k]:
                    np.testing.assert_allclose(obs[k][f], ref_obs[k][f], rtol=1e-6, err_msg=f"{t} {k} {f}")
                np.testing.assert_allclose(rew[k], ref_rew[k], rtol=1e-9, atol=1e-9)


@pytest.mark.reference
@pytest.mark.parametrize("scenario,regen", [("uniform", 1.0), ("quadrant", 0.0), ("multi_zone", 1.0)])
def test_step_parity_dynamic_layouts(scenario, regen):
    """The procedurally generated scenarios share the step; their reset state is loaded."""
    cfg = _config(0.0, fixed_four_skill_and_loc=False, planner_gets_spatial_info=True)
    for k in ("resource_regen_prob", "fixed_four_skill_and_loc", "env_layout_file"):
        cfg.pop(k)
    cfg.update(scenario_name=f"{scenario}/simple_wood_and_stone", wood_regen_weight=regen,
               stone_regen_weight=regen, episode_length=100)
    _run_parity(cfg, seed=13)
