"""one-step-economy with [SimpleLabor, PeriodicBracketTax]: parity with the reference.

The scenario is deterministic once SimpleLabor's construction-time skills are
fixed (docs/testing.md, deterministic steps): jaxecon built with the same
``seed`` draws the same skills, so here jaxecon *resets on its own* every
episode (no state loading) and must reproduce the reference's observations,
masks, rewards, coin and labor at every step, and its metrics at every
episode end, for both agent reward types and both planner reward types, over
many episodes of random mask-valid actions (period 2, episode length 2).
Runs under ``jax.enable_x64``.
"""

from __future__ import annotations

import copy

import jax
import numpy as np
import pytest

import jaxecon
from jaxecon.interop import state_from_foundation

from parity import to_jax_actions
from reference import make_reference_env, random_valid_actions
from jaxecon.foundation.formats import planner_entries

N_AGENTS = 4
N_EPISODES = 30


def _config(agent_reward_type, planner_reward_type, tax_kwargs=None, labor_kwargs=None, **scenario):
    return {
        "scenario_name": "one-step-economy",
        "n_agents": N_AGENTS,
        "world_size": [1, 1],
        "episode_length": 2,
        "multi_action_mode_agents": False,
        "multi_action_mode_planner": True,
        "flatten_observations": True,
        "flatten_masks": True,
        "components": [
            {"SimpleLabor": dict(labor_kwargs or {})},
            {"PeriodicBracketTax": {"period": 2, **(tax_kwargs or {})}},
        ],
        "agent_reward_type": agent_reward_type,
        "planner_reward_type": planner_reward_type,
        **scenario,
    }


def _compare_obs(obs, ref_obs, n, where):
    obs = {**obs, "p": planner_entries(obs["p"], n)}  # Foundation's p<i> entries
    for i in range(n):
        ref = ref_obs[str(i)]
        assert set(ref) == set(obs["a"]), (where, set(ref), set(obs["a"]))
        for k, v in ref.items():
            np.testing.assert_allclose(
                np.asarray(obs["a"][k][i]), np.asarray(v, np.float64), rtol=1e-6, atol=1e-7,
                err_msg=f"{where}: agent {i} obs {k}",
            )
    assert set(ref_obs["p"]) == set(obs["p"]), (where, set(ref_obs["p"]), set(obs["p"]))
    for k, v in ref_obs["p"].items():
        np.testing.assert_allclose(
            np.asarray(obs["p"][k]), np.asarray(v, np.float64), rtol=1e-6, atol=1e-7,
            err_msg=f"{where}: planner obs {k}",
        )


def _run(cfg, seed, unmasked_prob=0.0):
    """Run N_EPISODES episodes on both sides; return counters for sanity checks."""
    rng = np.random.default_rng(seed)
    stats = {"taxed": 0.0, "worked": 0, "high_rate_actions": 0}
    with jax.enable_x64(True):
        env = jaxecon.make_from_config({**cfg, "seed": seed})
        params = env.default_params
        ref_env = make_reference_env(cfg, seed=seed)
        ref_labor = ref_env.get_component("SimpleLabor")
        np.testing.assert_array_equal(env.components[0].skills, ref_labor.skills)
        reset = jax.jit(env.reset)
        step = jax.jit(env.step)
        metrics = jax.jit(env.metrics)
        key = jax.random.key(seed)
        for ep in range(N_EPISODES):
            ref_obs = ref_env.reset()
            key, k = jax.random.split(key)
            obs, state = reset(k, params, ref_env._completions)
            _compare_obs(obs, ref_obs, N_AGENTS, f"episode {ep} reset")
            if ep == 0:
                loaded = state_from_foundation(env, ref_env, params)
                for a, b in zip(jax.tree.leaves(loaded), jax.tree.leaves(state)):
                    np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=1e-12)
            for t in range(2):
                actions = random_valid_actions(ref_obs, ref_env, rng)
                if t == 0 and rng.random() < unmasked_prob:
                    # Masks are advisory (Q7): an unmasked high rate still applies.
                    actions["p"] = [int(x) for x in rng.integers(0, 22, size=7)]
                    stats["high_rate_actions"] += 1
                ref_obs, ref_rew, ref_done, _ = ref_env.step(copy.deepcopy(actions))
                key, k = jax.random.split(key)
                obs, state, rew, done, info = step(k, state, to_jax_actions(actions, env), params)
                where = f"episode {ep} step {t + 1}"
                _compare_obs(obs, ref_obs, N_AGENTS, where)
                np.testing.assert_allclose(
                    np.asarray(rew["a"]), [ref_rew[str(i)] for i in range(N_AGENTS)],
                    rtol=1e-12, atol=1e-9, err_msg=f"{where}: agent rewards",
                )
                np.testing.assert_allclose(float(rew["p"]), ref_rew["p"], rtol=1e-12, atol=1e-9, err_msg=where)
                assert bool(done) == ref_done["__all__"]
                agents = ref_env.world.agents
                np.testing.assert_allclose(
                    np.asarray(state.inventory["Coin"]), [a.state["inventory"]["Coin"] for a in agents],
                    rtol=1e-12, atol=1e-9, err_msg=where,
                )
                np.testing.assert_array_equal(
                    np.asarray(state.endogenous["Labor"]), [a.state["endogenous"]["Labor"] for a in agents]
                )
                np.testing.assert_allclose(
                    np.asarray(state.components["SimpleLabor"].production),
                    [a.state["production"] for a in agents], rtol=1e-12,
                )
            stats["worked"] += int(np.sum(np.asarray(state.endogenous["Labor"]) > 0))
            stats["taxed"] += float(state.components["PeriodicBracketTax"].total_collected_taxes)
            got = {k: float(v) for k, v in metrics(state, params).items()}
            ref_m = ref_env.previous_episode_metrics
            assert set(got) == set(ref_m), (set(got) ^ set(ref_m))
            for k, v in ref_m.items():
                np.testing.assert_allclose(got[k], v, rtol=1e-12, atol=1e-12, err_msg=f"episode {ep} metric {k}")
    return stats


@pytest.mark.reference
@pytest.mark.parametrize("agent_reward_type", ["coin_minus_labor_cost", "isoelastic_coin_minus_labor"])
@pytest.mark.parametrize("planner_reward_type", ["inv_income_weighted_utility", "coin_eq_times_productivity"])
def test_episode_parity(agent_reward_type, planner_reward_type):
    scenario = {}
    if planner_reward_type == "coin_eq_times_productivity":
        scenario["mixing_weight_gini_vs_coin"] = 0.3
    if agent_reward_type == "coin_minus_labor_cost":
        # a small labor cost so that random hours give both signs of reward
        scenario.update(labor_cost=0.01, labor_exponent=2.0)
    cfg = _config(agent_reward_type, planner_reward_type, **scenario)
    stats = _run(cfg, seed=5)
    assert stats["worked"] > 0 and stats["taxed"] > 0


@pytest.mark.reference
def test_episode_parity_annealing_linear_brackets_and_unmasked_actions():
    """Annealed masks move with completed episodes; unmasked rates still apply (Q7)."""
    cfg = _config(
        "isoelastic_coin_minus_labor",
        "inv_income_weighted_utility",
        tax_kwargs={
            "bracket_spacing": "linear", "n_brackets": 7, "top_bracket_cutoff": 120,
            "tax_annealing_schedule": [-3, 0.04],
        },
        labor_kwargs={"payment_max_skill_multiplier": 5},
        isoelastic_eta=0.5,
        labor_cost=0.05,
    )
    stats = _run(cfg, seed=9, unmasked_prob=0.3)
    assert stats["high_rate_actions"] > 0


def test_construction_validation():
    base = _config("coin_minus_labor_cost", "inv_income_weighted_utility")
    for bad in (
        {"agent_reward_type": "nope"},
        {"planner_reward_type": "inv_income_weighted_coin_endowments"},  # not in one-step (Q24)
        {"labor_exponent": 1.0},
        {"agent_reward_type": "isoelastic_coin_minus_labor", "isoelastic_eta": 1.5},
        {"mixing_weight_gini_vs_coin": 2.0},
        {"components": [{"PeriodicBracketTax": {"period": 2}}]},
        {"components": [{"SimpleLabor": {"mask_first_step": 1}}]},
        {"components": [{"SimpleLabor": {"pareto_param": 0.0}}]},
    ):
        with pytest.raises(ValueError):
            jaxecon.make_from_config({**base, **bad})


def test_skills_pareto_param_and_reference_flag():
    """Q16: Foundation ignores pareto_param (shape 4); jaxecon uses it unless flagged."""
    from jaxecon.components.simple_labor import sample_skills

    def skills(**kw):
        cfg = _config("coin_minus_labor_cost", "inv_income_weighted_utility", labor_kwargs=kw)
        return jaxecon.make_from_config({**cfg, "seed": 3}).components[0].skills

    default = skills()
    np.testing.assert_array_equal(default, sample_skills(np.random.RandomState(3), N_AGENTS, 4.0, 3.0))
    np.testing.assert_array_equal(skills(pareto_param=2.0, reference_pareto_shape_bug=True), default)
    heavy = skills(pareto_param=2.0)
    assert np.all(np.diff(heavy) > 0) and not np.allclose(heavy, default)
    np.testing.assert_array_equal(heavy, sample_skills(np.random.RandomState(3), N_AGENTS, 2.0, 3.0))


def test_jit_vmap_over_labor_cost():
    cfg = _config("coin_minus_labor_cost", "inv_income_weighted_utility")
    env = jaxecon.make_from_config({**cfg, "seed": 1})
    params = env.default_params
    costs = np.array([0.0, 0.5, 1.0])
    batch = params.replace(scenario=jax.tree.map(lambda x: x, params.scenario).replace(labor_cost=costs))
    axes = params.replace(
        scenario=jax.tree.map(lambda _: None, params.scenario).replace(labor_cost=0),
        components=jax.tree.map(lambda _: None, params.components),
    )

    def episode(p):
        _, s = env.reset(jax.random.key(0), p)
        work = {"a": np.full(N_AGENTS, 10, np.int32), "p": np.zeros(7, np.int32)}
        _, s, r1, _, _ = env.step(jax.random.key(1), s, {"a": np.zeros(N_AGENTS, np.int32)}, p)
        _, s, r2, _, _ = env.step(jax.random.key(2), s, work, p)
        return r1["a"] + r2["a"]

    ret = jax.jit(jax.vmap(episode, in_axes=(axes,)))(batch)
    assert ret.shape == (3, N_AGENTS)
    # 10 hours cost labor_cost * 100 utility each
    np.testing.assert_allclose(ret[0] - ret[2], 100.0, rtol=1e-5)


@pytest.mark.reference
def test_episode_parity_fixed_rates_annealed_cap():
    """A non-planner model under annealing: the cap grows with completed episodes, and
    each reset observation still uses the previous episode's cap (as Foundation does)."""
    cfg = _config(
        "coin_minus_labor_cost",
        "coin_eq_times_productivity",
        tax_kwargs={
            "tax_model": "fixed-bracket-rates", "fixed_bracket_rates": [0.5, 0.2, 0.3, 0.6, 0.7, 0.8, 0.9],
            "tax_annealing_schedule": [-2, 0.1],
        },
        labor_cost=0.02,
    )
    stats = _run(cfg, seed=13)
    assert stats["taxed"] > 0
