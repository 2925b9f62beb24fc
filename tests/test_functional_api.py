"""The functional API contract (DESIGN.md): jit, vmap, scan, determinism, errors."""

from __future__ import annotations

import chex
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.core.component import Component

from reference import GATHER_BUILD_CONFIG

BUILD = ("Build", {"payment": 10, "payment_max_skill_multiplier": 3, "skill_dist": "pareto", "build_labor": 10})
GATHER = ("Gather", {"move_labor": 1, "collect_labor": 1, "skill_dist": "pareto"})
T = 30


def make_env(**kw):
    """The Gather + Build economy of ``GATHER_BUILD_CONFIG`` (T steps) through ``jaxecon.make``, with ``kw``."""
    args = dict(components=[BUILD, GATHER], n_agents=4, world_size=[25, 25], episode_length=T,
                fixed_four_skill_and_loc=True, planner_gets_spatial_info=False)
    args.update(kw)
    return jaxecon.make("layout_from_file/simple_wood_and_stone", **args)


@pytest.fixture(scope="module")
def gb(jitted_env):
    """``make_env()`` (= GATHER_BUILD_CONFIG with T-step episodes), shared and jitted once per session."""
    return jitted_env({**GATHER_BUILD_CONFIG, "episode_length": T})


@pytest.fixture(scope="module")
def env(gb):
    return gb.env


def rollout(env, params, key, n_steps):
    """Random valid actions for n_steps from a reset; returns final state and rewards."""
    k_reset, k_roll = jax.random.split(key)
    obs, state = env.reset(k_reset, params)

    def body(carry, k):
        obs, state = carry
        ka, ks = jax.random.split(k)
        obs, state, rew, done, info = env.step(ks, state, env.sample_actions(ka, obs), params)
        return (obs, state), (rew["a"], rew["p"], done)

    (_, state), out = jax.lax.scan(body, (obs, state), jax.random.split(k_roll, n_steps))
    return state, out


@pytest.fixture(scope="module")
def batched_rollout(env):
    return jax.jit(jax.vmap(lambda k: rollout(env, env.default_params, k, T)))


def test_reset_shapes_and_dtypes(gb):
    obs, state = gb.reset(jax.random.key(0), gb.params)
    chex.assert_shape(obs["a"]["world-map"], (4, 7, 11, 11))
    chex.assert_shape(obs["a"]["world-idx_map"], (4, 2, 11, 11))
    chex.assert_shape(obs["a"]["action_mask"], (4, 6))
    chex.assert_shape(obs["a"]["flat"], (4, 9))
    assert obs["a"]["flat"].dtype == jnp.float32
    assert obs["a"]["world-idx_map"].dtype == jnp.int16
    assert set(obs["p"]) == {"time", "flat", "action_mask", "agents"}  # the planner's p0..p3, stacked
    chex.assert_shape(obs["p"]["agents"], (4, 3))
    assert state.loc.dtype == jnp.int32 and state.loc.shape == (4, 2)
    assert int(state.timestep) == 0


def test_scan_episode_no_retrace_and_done(env, batched_rollout):
    keys = jax.random.split(jax.random.key(1), 3)
    state, (ra, rp, done) = batched_rollout(keys)
    assert done.shape == (3, T) and bool(done[:, -1].all()) and not bool(done[:, :-1].any())
    np.testing.assert_array_equal(np.asarray(state.timestep), T)
    np.testing.assert_array_equal(np.asarray(state.completions), 1)
    # rewards are marginal utilities: their sum is the utility gain over the episode
    assert np.isfinite(np.asarray(ra)).all()
    size = batched_rollout._cache_size()
    batched_rollout(jax.random.split(jax.random.key(2), 3))
    assert batched_rollout._cache_size() == size, "second call retraced"


def test_same_key_same_trajectory_batched_or_not(env, batched_rollout):
    keys = jax.random.split(jax.random.key(3), 2)
    batched, (ra_b, _, _) = batched_rollout(keys)
    one_rollout = jax.jit(lambda k: rollout(env, env.default_params, k, T))  # compiled once
    single, (ra_s, _, _) = one_rollout(keys[1])
    np.testing.assert_array_equal(np.asarray(batched.loc[1]), np.asarray(single.loc))
    np.testing.assert_allclose(np.asarray(ra_b[1]), np.asarray(ra_s), rtol=1e-6, atol=1e-6)
    again, _ = one_rollout(keys[1])
    chex.assert_trees_all_equal(single, again)
    other, _ = one_rollout(keys[0])
    assert not np.array_equal(np.asarray(other.loc), np.asarray(single.loc)) or not np.array_equal(
        np.asarray(other.inventory["Coin"]), np.asarray(single.inventory["Coin"]))


def test_vmap_over_params(env):
    params = env.default_params
    payments = jnp.array([5.0, 10.0, 20.0])
    batch = jax.tree_util.tree_map(lambda x: jnp.broadcast_to(jnp.asarray(x), (3,) + jnp.shape(x)), params)
    batch = batch.replace(components={**batch.components,
                                      "Build": batch.components["Build"].replace(payment=payments)})
    _, states = jax.jit(jax.vmap(env.reset, in_axes=(None, 0)))(jax.random.key(0), batch)
    pay = np.asarray(states.components["Build"].build_payment)
    np.testing.assert_allclose(pay[1], 2 * pay[0], rtol=1e-6)
    np.testing.assert_allclose(pay[2], 4 * pay[0], rtol=1e-6)


def test_grad_through_rollout_wrt_energy_cost(env):
    def total_reward(energy_cost):
        p = env.default_params
        p = p.replace(scenario=p.scenario.replace(energy_cost=energy_cost))
        _, (ra, _, _) = rollout(env, p, jax.random.key(4), 10)
        return ra.sum()

    g = jax.jit(jax.grad(total_reward))(0.21)
    # d/dc of -(c * sum of labor) summed rewards = -(total labor accumulated) <= 0
    assert np.isfinite(g) and g <= 0


def test_bad_names_and_kwargs():
    with pytest.raises(KeyError, match="layout_from_file/simple_wood_and_stone"):
        jaxecon.make("no_such_scenario", components=[GATHER], n_agents=4, world_size=[25, 25])
    with pytest.raises(KeyError, match="Gather"):
        make_env(components=[("Gahter", {})])
    with pytest.raises(TypeError, match="resource_regen_prob"):
        make_env(resource_regen_probability=0.1)
    with pytest.raises(TypeError, match="Gather"):
        make_env(components=[BUILD, ("Gather", {"move_lab": 1})])
    with pytest.raises(ValueError, match="n_agents"):
        make_env(n_agents=1, fixed_four_skill_and_loc=False)
    with pytest.raises(ValueError, match="skill_dist"):
        make_env(components=[BUILD, ("Gather", {"skill_dist": "uniform"})])
    with pytest.raises(ValueError, match="resource_regen_prob"):
        make_env(resource_regen_prob=1.5)
    with pytest.raises(ValueError, match="isoelastic_eta"):
        make_env(isoelastic_eta=-0.1)
    with pytest.raises(ValueError, match="planner_reward_type"):
        make_env(planner_reward_type="inv_income_weighted_coin_endowment")
    with pytest.raises(ValueError, match="world_size"):
        make_env(world_size=[25])
    with pytest.raises(ValueError, match=r"world_size=\[9, 9\]"):
        make_env(env_layout_file="quadrant_8x8_4each_8clump.txt", world_size=[8, 8], fixed_four_skill_and_loc=False)
    with pytest.raises(ValueError, match="shipped layouts"):
        make_env(env_layout_file="nope.txt")
    with pytest.raises(ValueError, match="skill_dist='pareto'"):
        make_env(components=[("Build", {}), GATHER])
    with pytest.raises(ValueError, match="components"):
        make_env(components="Build")
    with pytest.raises(ValueError, match=r"n_agents must be <= 592"):
        make_env(n_agents=600, fixed_four_skill_and_loc=False)
    with pytest.raises(ValueError, match=r"n_agents must be <= 9, the tiles of world_size=\[3, 3\]"):
        jaxecon.make("uniform/simple_wood_and_stone", components=[GATHER], n_agents=10, world_size=[3, 3])
    assert make_env(world_size=np.array([25, 25])).world_size == (25, 25)
    with pytest.raises(ValueError, match=r"n_agents must be <= 29, the tiles outside the water cross"):
        jaxecon.make("quadrant/simple_wood_and_stone", components=[BUILD, GATHER], n_agents=30, world_size=[6, 6])
    split = dict(components=[BUILD, GATHER], world_size=[9, 9], env_layout_file="quadrant_8x8_4each_8clump.txt")
    with pytest.raises(ValueError, match=r"must be <= 32, .* below water_row 4"):
        jaxecon.make("split_layout/simple_wood_and_stone", n_agents=58, **split)
    with pytest.raises(ValueError, match=r"skill_rank_of_top_agents must be <= 8, .* above water_row 1"):
        jaxecon.make("split_layout/simple_wood_and_stone", n_agents=20, water_row=1,
                     skill_rank_of_top_agents=list(range(10)), **split)
    with pytest.raises(ValueError, match="energy_cost must be a finite number"):
        make_env(energy_cost=float("inf"))
    assert make_env(planner_gets_spatial_info=np.True_).planner_gets_spatial_info is True
    with pytest.raises(ValueError, match="episode_length must be an integer, got True"):
        make_env(episode_length=True)
    with pytest.raises(ValueError, match=r"^episode_length must be <= 2147483647, got 1000000000000$"):
        make_env(episode_length=10**12)  # an int32 timestep never reaches it: the episode never ended
    with pytest.raises(ValueError, match=r"world_size\[0\] must be an integer"):
        make_env(world_size=[True, 25])


def test_user_layout_file_and_make_from_config(tmp_path):
    layout = tmp_path / "tiny.txt"
    layout.write_text("W  S;    ;@@  ;S  W;")
    cfg = {"scenario_name": "layout_from_file/simple_wood_and_stone",
           "components": [{"Build": {}}, {"Gather": {}}], "n_agents": 2, "world_size": [4, 4],
           "episode_length": 5, "env_layout_file": str(layout)}
    env = jaxecon.make_from_config(cfg)
    _, state = env.reset(jax.random.key(0), env.default_params)
    np.testing.assert_array_equal(np.asarray(state.maps["Water"])[2], [1, 1, 0, 0])
    assert float(state.maps["Wood"].sum()) == 2 and float(state.maps["StoneSourceBlock"].sum()) == 2
    with pytest.raises(ValueError, match="scenario_name"):
        jaxecon.make_from_config({"components": []})


def test_action_validation(gb):
    env, params = gb.env, gb.params
    obs, state = gb.reset(jax.random.key(0), params)
    with pytest.raises(ValueError, match=r'actions\["a"\] must have shape \(4,\)'):
        env.step(jax.random.key(0), state, {"a": jnp.zeros((4, 2), jnp.int32)}, params)
    with pytest.raises(ValueError, match="integer dtype"):
        env.step(jax.random.key(0), state, {"a": jnp.zeros(4, jnp.float32)}, params)
    with pytest.raises(ValueError, match="unknown keys"):
        env.step(jax.random.key(0), state, {"a": jnp.zeros(4, jnp.int32), "b": 1}, params)
    # missing entries mean NO-OP
    _, s1, _, _, _ = env.step(jax.random.key(0), state, {}, params)
    assert int(s1.timestep) == 1


def test_out_of_range_actions_are_noop_and_checkify_reports(gb):
    env, params = gb.env, gb.params
    obs, state = gb.reset(jax.random.key(0), params)
    bad = {"a": jnp.array([0, 99, -1, 5], jnp.int32), "p": jnp.zeros(1, jnp.int32)}
    noop = {"a": jnp.array([0, 0, 0, 5], jnp.int32), "p": jnp.zeros(1, jnp.int32)}
    _, s_bad, _, _, _ = gb.step(jax.random.key(1), state, bad, params)
    _, s_noop, _, _, _ = gb.step(jax.random.key(1), state, noop, params)
    chex.assert_trees_all_equal(s_bad, s_noop)
    checked_step = jax.jit(env.checked_step)
    err, _ = checked_step(jax.random.key(1), state, bad, params)
    with pytest.raises(Exception, match="out-of-range mobile-agent action"):
        err.throw()
    err, _ = checked_step(jax.random.key(1), state, noop, params)
    err.throw()  # in range: no error


def test_multi_action_mode_and_unflattened(env):
    e = make_env(multi_action_mode_agents=True, flatten_observations=False, flatten_masks=False)
    obs, state = e.reset(jax.random.key(0), e.default_params)
    assert set(obs["a"]["action_mask"]) == {"Build", "Gather"}
    assert obs["a"]["action_mask"]["Gather"].shape == (4, 4)
    assert "Build-build_payment" in obs["a"] and obs["a"]["Build-build_payment"].shape == (4,)
    assert set(obs["p"]["agents"]) == {"world-inventory-Coin", "world-inventory-Stone", "world-inventory-Wood"}
    assert obs["p"]["agents"]["world-inventory-Coin"].shape == (4,)
    acts = {"a": jnp.array([[1, 0], [0, 2], [0, 0], [1, 4]], jnp.int32)}
    _, s1, _, _, _ = e.step(jax.random.key(1), state, acts, e.default_params)
    assert int(s1.timestep) == 1


def test_user_component_registers_and_runs():
    @jaxecon.component_registry.add
    class CoinRain(Component):
        """Test component: every agent gets 1 coin per step."""

        name = "CoinRainTest"
        required_entities = ("Coin",)
        agent_subclasses = ("BasicMobileAgent",)

        def step(self, key, state, actions, params):
            inv = {**state.inventory, "Coin": state.inventory["Coin"] + 1}
            return state.replace(inventory=inv)

    e = make_env(components=[BUILD, GATHER, ("CoinRainTest", {})])
    params = e.default_params
    obs, state = e.reset(jax.random.key(0), params)
    for i in range(3):
        obs, state, *_ = e.step(jax.random.key(i), state, {}, params)
    np.testing.assert_allclose(np.asarray(state.inventory["Coin"]), 3.0)
    # Registering the name again replaces the entry, as in Foundation.
    @jaxecon.component_registry.add
    class Other(Component):
        name = "CoinRainTest"

    assert jaxecon.component_registry.get("CoinRainTest") is Other
    # A class that is neither kind of component is refused, naming what it lacks.
    with pytest.raises(TypeError, match="lacks: get_n_actions, get_additional_state_fields"):
        @jaxecon.component_registry.add
        class NotAComponent:
            name = "NotAComponentTest"


def test_eta_one_is_log_utility():
    from jaxecon import rewards
    u = rewards.isoelastic_coin_minus_labor(jnp.array([0.0, 1.0, 10.0]), jnp.zeros(3), 1.0, 0.0)
    np.testing.assert_allclose(np.asarray(u), [0.0, 0.0, np.log(10.0)], rtol=1e-6)
    g = jax.grad(lambda eta: rewards.isoelastic_coin_minus_labor(10.0, 0.0, eta, 0.0))(1.0)
    assert np.isfinite(g)


def test_sample_actions_uniform_over_valid_entries():
    from jaxecon.core.action_layout import ActionLayout

    single = ActionLayout(("A", "B"), (2, 3), False)
    mask = jnp.array([[1, 0, 1, 1, 0, 0], [1, 1, 1, 1, 1, 1]], jnp.float32)
    draws = np.asarray(jax.vmap(lambda k: single.sample(k, mask))(jax.random.split(jax.random.key(0), 6000)))
    assert set(np.unique(draws[:, 0])) == {0, 2, 3}
    for row, valid in ((0, [0, 2, 3]), (1, range(6))):
        freq = np.bincount(draws[:, row], minlength=6)[list(valid)] / 6000
        np.testing.assert_allclose(freq, 1 / len(freq), atol=0.03)
    multi = ActionLayout(("A", "B"), (2, 3), True)
    mmask = jnp.array([1, 0, 1, 1, 0, 0, 1], jnp.float32)  # A: [noop, 0, 1]; B: [noop, 0, 0, 1]
    draws = np.asarray(jax.vmap(lambda k: multi.sample(k, mmask))(jax.random.split(jax.random.key(1), 4000)))
    assert set(np.unique(draws[:, 0])) == {0, 2} and set(np.unique(draws[:, 1])) == {0, 3}
