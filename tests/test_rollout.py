"""``jaxecon.rollout``: the one scan over steps that run, bench, sharding and analysis share."""

import jax
import jax.extend.core
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.rollout import RolloutCarry, episode, scan_steps

T = 5


@pytest.fixture(scope="module")
def env():
    return jaxecon.make("layout_from_file/simple_wood_and_stone",
                        components=[("Build", {}), ("Gather", {"skill_dist": "pareto"})],
                        n_agents=4, world_size=[25, 25], episode_length=T)


def _rewards(state, actions, reward, done, info):
    return reward


def _equal(a, b):
    la, lb = jax.tree.leaves(a), jax.tree.leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        if jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
            x, y = jax.random.key_data(x), jax.random.key_data(y)
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))


def test_batched_is_vmap_of_unbatched_with_carried_keys(env):
    params = env.default_params
    keys = jax.random.split(jax.random.key(0), 2)
    obs, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys, params)
    step_keys = jax.random.split(jax.random.key(1), 2)
    run = jax.jit(lambda c: scan_steps(env, params, c, T, recorder=_rewards, batched=True))
    carry, rew = run(RolloutCarry(obs=obs, state=state, key=step_keys))
    assert rew["a"].shape == (T, 2, env.n_agents) and rew["p"].shape == (T, 2)
    one = jax.jit(lambda c: scan_steps(env, params, c, T, recorder=_rewards))
    for b in range(2):
        pick = lambda x: x[b]  # noqa: E731
        c_b, rew_b = one(RolloutCarry(obs=jax.tree.map(pick, obs), state=jax.tree.map(pick, state),
                                      key=step_keys[b]))
        _equal(c_b, jax.tree.map(pick, carry))
        _equal(rew_b, jax.tree.map(lambda x: x[:, b], rew))


def test_given_actions_follow_the_per_step_key_schedule(env):
    """With given actions step t uses step_keys[t] itself; the result is env.step by hand."""
    params = env.default_params
    obs, state = env.reset(jax.random.key(2), params)
    step_keys = jax.random.split(jax.random.key(3), T)
    acts = {"a": jax.random.randint(jax.random.key(4), (T, env.n_agents), 0, 6)}
    carry, _ = scan_steps(env, params, RolloutCarry(obs=obs, state=state), T,
                          step_keys=step_keys, actions=acts)
    assert carry.key is None
    s = state
    for t in range(T):
        _, s, _, _, _ = env.step(step_keys[t], s, {"a": acts["a"][t]}, params)
    _equal(carry.state, s)


def test_stateful_policy_is_carried_and_traced_once(env):
    params = env.default_params
    traces = []

    def policy(key, obs, state, count):
        traces.append(1)
        return env.sample_actions(key, obs), count + 1

    def record(state, actions, reward, done, info):
        return state.timestep

    @jax.jit
    def run(key):
        state0, carry, timesteps = episode(env, key, params, policy=policy,
                                           policy_state=jnp.zeros((), jnp.int32), recorder=record)
        return carry.policy_state, timesteps

    for seed in (5, 6):
        count, timesteps = run(jax.random.key(seed))
        assert int(count) == T
        np.testing.assert_array_equal(np.asarray(timesteps), np.arange(1, T + 1))
    assert len(traces) == 1


def test_bad_arguments(env):
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    carry = RolloutCarry(obs=obs, state=state)
    with pytest.raises(ValueError, match="carry.key"):
        scan_steps(env, params, carry, T)
    with pytest.raises(ValueError, match="at most one"):
        scan_steps(env, params, carry, T, policy=lambda k, o, s: {}, actions={})
    with pytest.raises(ValueError, match="n_steps"):
        scan_steps(env, params, carry, 0, step_keys=jax.random.split(jax.random.key(0), 1))
    with pytest.raises(ValueError, match="leading shape"):
        scan_steps(env, params, carry, T, step_keys=jax.random.split(jax.random.key(0), T + 1))
    with pytest.raises(ValueError, match=r'actions\["a"\] must have shape'):
        scan_steps(env, params, carry, T, step_keys=jax.random.split(jax.random.key(0), T),
                   actions={"a": jnp.zeros((T, 3), jnp.int32)})


def test_arguments_that_failed_deep_inside_are_named(env):
    """Each raised an AttributeError, a TypeError from JAX's PRNG or "'int' object is not callable"."""
    from jaxecon.wrappers import GymnaxEnv

    params = env.default_params
    key = jax.random.key(0)
    obs, state = env.reset(key, params)
    with pytest.raises(TypeError, match=r"^env must be a jaxecon env \(jaxecon\.make\(\.\.\.\)\), got builtins\.NoneType$"):
        episode(None, key, params, T)
    with pytest.raises(TypeError, match=r"got jaxecon\.wrappers\.gymnax\.GymnaxEnv \(a wrapped env: pass its "
                                        r"jaxecon env, env\.unwrapped\)$"):
        scan_steps(GymnaxEnv(env), params, RolloutCarry(obs=obs, state=state, key=key), T)
    with pytest.raises(TypeError, match=r"^key must be one PRNG key .*got 0$"):
        episode(env, 0, params, T)
    with pytest.raises(TypeError, match=r"^carry must be a RolloutCarry .*got EnvState$"):
        scan_steps(env, params, state, T)
    with pytest.raises(ValueError, match=r"^recorder must be None or callable .*got 5$"):
        episode(env, key, params, T, recorder=5)


def test_scan_steps_runs_a_pure_jax_wrapper_and_refuses_a_front(env):
    """A jaxecon.wrappers.Wrapper keeps the functional signatures (the bench times
    observation adapters through scan_steps); a front does not."""
    from jaxecon.wrappers import GymnaxEnv, LogWrapper

    wrapped = LogWrapper(env)
    params = env.default_params
    obs, state = wrapped.reset(jax.random.key(0), params)
    carry, _ = scan_steps(wrapped, params, RolloutCarry(obs=obs, state=state, key=jax.random.key(1)), T)
    assert int(carry.state.env_state.timestep) == T
    with pytest.raises(TypeError, match=r"must be a jaxecon env \(jaxecon\.make\(\.\.\.\)\) or a "
                                        r"jaxecon\.wrappers\.Wrapper over one, got jaxecon\.wrappers\.gymnax\.GymnaxEnv"):
        scan_steps(GymnaxEnv(env), params, RolloutCarry(obs=obs, state=state, key=jax.random.key(1)), T)


def test_masks_drawn_from_wait_for_the_actions_and_keep_every_bit():
    from jaxecon.rollout import _masks_after

    mask = jnp.array([1.0, 0.0, -0.0, jnp.nan, jnp.inf, -jnp.inf, 3.5], jnp.float32)
    obs = {"a": {"action_mask": mask, "flat": mask}, "p": {"action_mask": mask[:2]}}
    acts = {"a": jnp.array([7, -3], jnp.int32), "p": jnp.array(2**31 - 1, jnp.int32)}
    out = jax.jit(_masks_after)(obs, acts)
    for x, y in zip(jax.tree.leaves(obs), jax.tree.leaves(out)):
        np.testing.assert_array_equal(np.asarray(x).view(np.uint32), np.asarray(y).view(np.uint32))
    # The masks are computed from the actions (so written after the policy read
    # them); the rest of the observation passes through untouched.
    closed = jax.make_jaxpr(_masks_after)(obs, acts)
    jaxpr = closed.jaxpr
    flat_in = jax.tree.leaves((obs, acts))
    act_vars = set(jaxpr.invars[len(jax.tree.leaves(obs)):])
    assert len(jaxpr.invars) == len(flat_in)
    made_from = {}
    for eqn in jaxpr.eqns:
        deps = set()
        for v in eqn.invars:
            if isinstance(v, jax.extend.core.Var):
                deps |= made_from.get(v, {v})
        for v in eqn.outvars:
            made_from[v] = deps
    out_paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path(out)[0]]
    for path, v in zip(out_paths, jaxpr.outvars):
        if "action_mask" in path:
            assert made_from.get(v, set()) & act_vars, path
        else:
            assert v in jaxpr.invars, path
