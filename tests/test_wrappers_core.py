"""AutoResetWrapper and LogWrapper (jaxecon.wrappers), inside jit and vmap.

The economy is the canonical one without trade (Build, Gather, taxes; two
agents, cheap to compile) with 5-step episodes, the "auto" energy warm-up and a fast tax annealing, so that what
Foundation keeps across episodes visibly changes: the completion count, the
warm-up integrator (the agents start with wood and stone and always pick
Build, so some earn coin on the first step) and, through the completions, the
planner's annealed action mask. The oracle is a host loop over the jitted
bare env that calls ``reset(k_reset, params, prev_state=state)`` itself
whenever ``done`` is set, with the wrapper's key schedule.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.wrappers import AutoResetWrapper, LogWrapper, Wrapper, unwrap_state

from common import jit_fast, shim_config, taxed_config, two_agents

EPISODE = 5
STEPS = 12  # two ends (steps 5 and 10) and two steps into the third episode
BATCH = 2


def _config():
    cfg = two_agents(taxed_config(), EPISODE, energy_warmup_method="auto", energy_warmup_constant=20)
    for c in cfg["components"]:
        c.get("PeriodicBracketTax", {}).update(period=EPISODE, tax_annealing_schedule=[-1, 0.5])
    return cfg


def _with_materials(state):
    """``state`` with 10 extra wood and stone per agent, so Build can pay out."""
    inv = dict(state.inventory)
    inv["Wood"] = inv["Wood"] + 10
    inv["Stone"] = inv["Stone"] + 10
    return state.replace(inventory=inv)


@pytest.fixture(scope="module")
def econ():
    env = jaxecon.make_from_config(_config())
    params = env.default_params
    actions = {"a": jnp.ones(env.n_agents, jnp.int32),  # 1 = Build
               "p": jnp.zeros(env.planner_actions.action_shape, jnp.int32)}
    keys = jax.random.split(jax.random.key(7), BATCH * (STEPS + 1)).reshape(BATCH, STEPS + 1)
    return env, params, actions, keys


@pytest.fixture(scope="module")
def jitted(econ):
    """The bare env's ``step``, ``reset`` and ``metrics``, jitted once for the module."""
    env = econ[0]
    return jit_fast(env.step), jit_fast(env.reset), jit_fast(env.metrics)


@pytest.fixture(scope="module")
def wrapped_run(econ):
    """The wrapped stack rolled out for ``STEPS`` steps under ``jit(vmap(scan))``."""
    env, params, actions, keys = econ
    wenv = AutoResetWrapper(LogWrapper(env))

    def one(keys_b):
        obs, state = wenv.reset(keys_b[0], params)
        state = state.replace(env_state=_with_materials(state.env_state))

        def body(carry, k):
            obs, state = carry
            obs, state, reward, done, info = wenv.step(k, state, actions, params)
            return (obs, state), (obs, unwrap_state(state), reward, done, info)

        _, out = jax.lax.scan(body, (obs, state), keys_b[1:])
        return out

    return jit_fast(jax.vmap(one))(keys)


@pytest.fixture(scope="module")
def explicit_run(econ, jitted):
    """The oracle: per economy, a host loop over jitted ``step``/``reset(prev_state=...)``."""
    env, params, actions, keys = econ
    step, reset, metrics = jitted
    runs = []
    for b in range(BATCH):
        _, state = reset(keys[b, 0], params)
        state = _with_materials(state)
        rec = []
        for t in range(STEPS):
            k_step, k_reset = jax.random.split(keys[b, t + 1])
            obs_st, state_st, reward, done, _ = step(k_step, state, actions, params)
            obs, state = obs_st, state_st
            if bool(done):
                obs, state = reset(k_reset, params, prev_state=state_st)
            rec.append(dict(obs=obs, obs_st=obs_st, state_st=state_st, state=state, reward=reward,
                            done=bool(done), metrics=metrics(state_st, params)))
        runs.append(rec)
    return runs


def _assert_trees_close(got, want, where):
    g = jax.tree_util.tree_flatten_with_path(got)[0]
    w = jax.tree_util.tree_flatten_with_path(want)[0]
    assert [jax.tree_util.keystr(p) for p, _ in g] == [jax.tree_util.keystr(p) for p, _ in w], where
    for (path, a), (_, b) in zip(g, w):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=1e-6, atol=1e-6,
                                   err_msg=f"{where}{jax.tree_util.keystr(path)}")


def _at(tree, b, t):
    return jax.tree.map(lambda x: x[b, t], tree)


def test_auto_reset_matches_explicit_reset_with_prev_state(wrapped_run, explicit_run):
    obs, state, reward, done, info = wrapped_run
    for b in range(BATCH):
        for t, want in enumerate(explicit_run[b]):
            assert bool(done[b, t]) == want["done"]
            _assert_trees_close(_at(state, b, t), want["state"], f"state b={b} t={t}")
            _assert_trees_close(_at(obs, b, t), want["obs"], f"obs b={b} t={t}")
            _assert_trees_close(_at(info["final_observation"], b, t), want["obs_st"], f"final obs b={b} t={t}")
            _assert_trees_close(_at(reward, b, t), want["reward"], f"reward b={b} t={t}")


def test_auto_reset_carries_what_foundation_keeps(wrapped_run, econ, jitted):
    params = econ[1]
    _, state, _, done, _ = wrapped_run
    ends = np.flatnonzero(np.asarray(done[0]))
    np.testing.assert_array_equal(ends, [EPISODE - 1, 2 * EPISODE - 1])
    first_reset = _at(state, 0, EPISODE - 1)  # the state right after the first reset
    assert int(first_reset.timestep) == 0
    assert int(first_reset.completions) == 1
    assert int(state.completions[0, -1]) == 2
    # Build paid out on the first step, so the warm-up integrator counted it and kept it.
    assert int(first_reset.scenario.auto_warmup_integrator) >= 1
    assert int(state.scenario.auto_warmup_integrator[0, -1]) >= int(first_reset.scenario.auto_warmup_integrator)
    # A fresh reset would forget both; the annealed planner mask shows the completions.
    obs_fresh, fresh = jitted[1](jax.random.key(0), params)
    assert int(fresh.completions) == 0 and int(fresh.scenario.auto_warmup_integrator) == 0
    obs, *_ = wrapped_run
    carried_mask = np.asarray(obs["p"]["action_mask"][0, EPISODE - 1])
    assert carried_mask.sum() > np.asarray(obs_fresh["p"]["action_mask"]).sum()


def test_terminated_and_truncated(wrapped_run):
    _, _, _, done, info = wrapped_run
    assert info["terminated"].dtype == jnp.bool_ and info["truncated"].dtype == jnp.bool_
    assert not bool(jnp.any(info["terminated"]))  # Foundation episodes end by time limit only
    np.testing.assert_array_equal(np.asarray(info["truncated"]), np.asarray(done))
    assert bool(jnp.any(info["truncated"]))


def test_log_wrapper_returns_are_the_summed_rewards(wrapped_run, explicit_run):
    _, _, reward, done, info = wrapped_run
    for b in range(BATCH):
        start = 0
        for t in range(STEPS):
            if not bool(done[b, t]):
                continue
            for g in ("a", "p"):
                want = np.asarray(reward[g][b, start:t + 1]).sum(axis=0)
                np.testing.assert_allclose(np.asarray(info["returned_episode_returns"][g][b, t]), want,
                                           rtol=1e-5, atol=1e-6)
            assert int(info["returned_episode_lengths"][b, t]) == EPISODE
            _assert_trees_close(_at(info["episode_metrics"], b, t),
                                {k: v for k, v in explicit_run[b][t]["metrics"].items()
                                 if k in info["episode_metrics"]}, f"metrics b={b} t={t}")
            start = t + 1
        np.testing.assert_array_equal(np.asarray(info["returned_episode"][b]), np.asarray(done[b]))
    # The first episode's returns are held until the second one ends.
    np.testing.assert_allclose(np.asarray(info["returned_episode_returns"]["a"][0, EPISODE:2 * EPISODE - 1]),
                               np.broadcast_to(np.asarray(info["returned_episode_returns"]["a"][0, EPISODE - 1]),
                                               (EPISODE - 1, 2)))
    assert float(jnp.abs(info["returned_episode_returns"]["a"][:, EPISODE - 1]).sum()) > 0
    assert {"social/productivity", "social/equality"} <= set(info["episode_metrics"])


def test_log_wrapper_timestep_counts_steps_across_episodes(wrapped_run):
    """PureJaxRL's ``info["timestep"]``: steps since the first reset, the auto-reset carrying it over."""
    _, state, _, done, info = wrapped_run
    assert info["timestep"].dtype == jnp.int32 and info["timestep"].shape == (BATCH, STEPS)
    np.testing.assert_array_equal(np.asarray(info["timestep"]), np.broadcast_to(np.arange(1, STEPS + 1), (BATCH, STEPS)))
    assert bool(jnp.any(done))  # it ran across episode ends, where the env's own timestep restarts
    assert int(state.timestep[0, EPISODE - 1]) == 0


def test_log_wrapper_metric_selection(econ):
    env = econ[0]
    every = LogWrapper(env, metrics="all").metric_names
    assert "Build/total_builds" in every and "social/equality" in every
    scenario = LogWrapper(env).metric_names
    assert "social/equality" in scenario and "Build/total_builds" not in scenario
    assert LogWrapper(env, metrics=["Build/total_builds"]).metric_names == ("Build/total_builds",)
    with pytest.raises(ValueError, match="unknown names.*allowed"):
        LogWrapper(env, metrics=["no/such/metric"])
    with pytest.raises(ValueError, match="metrics must be"):
        LogWrapper(env, metrics="social")


def test_wrapper_forwards_and_unwraps(econ):
    env = econ[0]
    stack = AutoResetWrapper(LogWrapper(env))
    assert stack.unwrapped is env
    assert stack.n_agents == env.n_agents and stack.agent_actions is env.agent_actions
    assert isinstance(stack.env, LogWrapper)
    assert repr(stack).startswith("AutoResetWrapper(LogWrapper(")


def test_bad_input(econ):
    env = econ[0]
    with pytest.raises(TypeError, match="env must be a jaxecon functional environment"):
        Wrapper(object())
    with pytest.raises(TypeError, match="env must be a jaxecon functional environment"):
        AutoResetWrapper("not an env")
    from jaxecon import foundation

    shim = foundation.make_env_instance(**shim_config())  # the shim interfaces' economy: compiled once
    with pytest.raises(TypeError, match=r"env\.core"):
        LogWrapper(shim)
    with pytest.raises(TypeError, match="only once"):
        AutoResetWrapper(AutoResetWrapper(env))
    with pytest.raises(TypeError, match=r"AutoResetWrapper\(LogWrapper\(env\)\)"):
        LogWrapper(AutoResetWrapper(env))
    with pytest.raises(TypeError, match="env_state"):
        unwrap_state({"timestep": 0})
    params, actions = econ[1], econ[2]
    _, state = jax.eval_shape(env.reset, jax.random.key(0), params)
    with pytest.raises(TypeError, match="state must be the LogState that LogWrapper.reset returned, got EnvState"):
        jax.eval_shape(lambda s: LogWrapper(env).step(jax.random.key(0), s, actions, params), state)
