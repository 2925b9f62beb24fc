"""GymnaxEnv's per-agent mode, invalid-action remapping and lean info.

Per-agent mode (``agents_as_batch=True``) is what single-agent gymnax code
(PureJaxRL, rejax) drives: ``jax.vmap(env.step)`` over NUM_ENVS entries, one
mobile agent each. The tests run it the way PureJaxRL does (a
PureJaxRL-style ``LogWrapper`` written here, GAE over ``[T, NUM_ENVS]``) and
check it against joint mode, entry for entry.
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

from jaxecon.configs import gather_build_config
from jaxecon.wrappers import GymnaxEnv
from jaxecon.wrappers.gymnax import AgentState

from common import TINY_CONFIG, jit_fast, two_agents

EPISODE = 5
STEPS = 7  # crosses one auto-reset
ECONOMIES = 2
BOTH = ("action_mask", "final_observation")


@pytest.fixture(scope="module")
def small(jitted_env):
    """Build and Gather, two agents (shared with test_gymnax_front.py)."""
    return jitted_env(two_agents(gather_build_config(), EPISODE)).env


@pytest.fixture(scope="module")
def per_agent(small):
    return GymnaxEnv(small, agents_as_batch=True, info_keys=BOTH)


@pytest.fixture(scope="module")
def joint(small):
    return GymnaxEnv(small, info_keys=BOTH)


def _rollout(genv, keys, actions):
    """``jax.vmap`` of reset, then ``lax.scan`` of ``jax.vmap(step)`` over ``actions`` [T, B, ...]."""
    params = genv.default_params
    obs, state = jax.vmap(genv.reset, in_axes=(0, None))(keys, params)

    def body(state, xs):
        k, action = xs
        step_keys = jax.vmap(lambda key: jax.random.fold_in(key, k))(keys)
        obs, state, reward, terminated, truncated, info = jax.vmap(genv.step, in_axes=(0, 0, 0, None))(
            step_keys, state, action, params)
        mask = jax.vmap(genv.action_mask, in_axes=(0, None))(state, params)
        return state, dict(obs=obs, reward=reward, terminated=terminated, truncated=truncated, info=info, mask=mask)

    _, out = jax.lax.scan(body, state, (jnp.arange(STEPS), actions))
    return obs, out


@pytest.fixture(scope="module")
def both_modes(per_agent, joint):
    """The same economies (same keys, same actions) stepped in both modes, in one jitted program."""
    n = per_agent.num_agents
    keys = jax.random.split(jax.random.key(7), ECONOMIES * n)
    actions = jax.random.randint(jax.random.key(8), (STEPS, ECONOMIES * n), 0, per_agent.num_actions, jnp.int32)

    def run(keys, actions):
        return (_rollout(per_agent, keys, actions),
                _rollout(joint, keys[::n], actions.reshape(STEPS, ECONOMIES, n)))

    return jit_fast(run)(keys, actions)


def test_entries_equal_joint_mode(both_modes, per_agent):
    (obs0, out), (obs0_joint, out_joint) = both_modes
    n, b = per_agent.num_agents, ECONOMIES * per_agent.num_agents
    d = per_agent.observation_space().shape[0]
    assert obs0.shape == (b, d) and obs0.dtype == jnp.float32
    assert out["obs"].shape == (STEPS, b, d)
    assert out["reward"].shape == (STEPS, b) and out["truncated"].shape == (STEPS, b)
    assert out["mask"].shape == (STEPS, b, per_agent.num_actions)
    per_entry = lambda x: np.asarray(x).reshape((STEPS, b) + x.shape[3:])  # [T, E, n, ...] -> [T, E * n, ...]
    np.testing.assert_array_equal(np.asarray(obs0), np.asarray(obs0_joint).reshape(b, d))
    for key in ("obs", "reward", "mask"):
        np.testing.assert_array_equal(np.asarray(out[key]), per_entry(out_joint[key]), err_msg=key)
    for key in BOTH:
        np.testing.assert_array_equal(np.asarray(out["info"][key]), per_entry(out_joint["info"][key]), err_msg=key)
    # an economy's values are repeated on each of its entries
    for key in ("truncated", "terminated"):
        np.testing.assert_array_equal(np.asarray(out[key]), np.repeat(np.asarray(out_joint[key]), n, axis=1))
    np.testing.assert_array_equal(np.asarray(out["info"]["planner_reward"]),
                                  np.repeat(np.asarray(out_joint["info"]["planner_reward"]), n, axis=1))
    assert np.asarray(out["truncated"][EPISODE - 1]).all() and np.asarray(out["truncated"]).sum() == b
    assert np.asarray(out["reward"]).any()  # the random actions gathered something


def test_entry_state_is_its_economy_and_agent(per_agent):
    keys = jax.random.split(jax.random.key(0), 2 * per_agent.num_agents)
    _, state = jax.vmap(per_agent.reset, in_axes=(0, None))(keys, per_agent.default_params)
    assert isinstance(state, AgentState)
    np.testing.assert_array_equal(np.asarray(state.agent), [0, 1, 0, 1])
    loc = np.asarray(state.env_state.loc)  # each entry holds a copy of its economy's state
    np.testing.assert_array_equal(loc[0], loc[1])
    np.testing.assert_array_equal(loc[2], loc[3])
    assert not np.array_equal(loc[0], loc[2])  # the economies' first keys differ


@struct.dataclass
class _LogState:
    """A PureJaxRL-style logger's state: scalar running sums per entry."""
    env_state: object
    episode_returns: jax.Array
    episode_lengths: jax.Array
    returned_episode_returns: jax.Array
    returned_episode_lengths: jax.Array


class _PureJaxRLStyleLog:
    """What PureJaxRL's LogWrapper does (written here, not copied): scalar reward, legacy done."""

    def __init__(self, env):
        self._env = env

    def __getattr__(self, name):
        return getattr(self._env, name)

    @partial(jax.jit, static_argnums=(0,))
    def reset(self, key, params=None):
        obs, env_state = self._env.reset(key, params)
        return obs, _LogState(env_state, 0.0, 0, 0.0, 0)

    @partial(jax.jit, static_argnums=(0,))
    def step(self, key, state, action, params=None):
        obs, env_state, reward, done, info = self._env.step(key, state.env_state, action, params)
        ret, length = state.episode_returns + reward, state.episode_lengths + 1
        state = _LogState(env_state, ret * (1 - done), length * (1 - done),
                          state.returned_episode_returns * (1 - done) + ret * done,
                          state.returned_episode_lengths * (1 - done) + length * done)
        info["returned_episode_returns"] = state.returned_episode_returns
        info["returned_episode_lengths"] = state.returned_episode_lengths
        info["returned_episode"] = done
        return obs, state, reward, done, info


def _gae(reward, value, done, last_value, gamma=0.99, lam=0.95):
    """PureJaxRL's GAE recursion over [T, NUM_ENVS] (reverse lax.scan)."""
    def back(carry, x):
        gae, next_value = carry
        r, v, d = x
        delta = r + gamma * next_value * (1 - d) - v
        gae = delta + gamma * lam * (1 - d) * gae
        return (gae, v), gae

    _, adv = jax.lax.scan(back, (jnp.zeros_like(last_value), last_value), (reward, value, done), reverse=True)
    return adv


def test_purejaxrl_style_loop(small):
    """LogWrapper, vmap over NUM_ENVS, scan, GAE: the shapes single-agent code expects, under jit."""
    env = _PureJaxRLStyleLog(GymnaxEnv(small, agents_as_batch=True, step_api="legacy"))
    num_envs = ECONOMIES * env.num_agents
    params = env.default_params
    d = env.observation_space(params).shape[0]

    def run(key):
        obs, state = jax.vmap(env.reset, in_axes=(0, None))(jax.random.split(key, num_envs), params)

        def body(carry, key):
            obs, state = carry
            k_act, k_step = jax.random.split(key)
            action = jax.random.randint(k_act, (num_envs,), 0, env.action_space(params).n)
            obs, state, reward, done, info = jax.vmap(env.step, in_axes=(0, 0, 0, None))(
                jax.random.split(k_step, num_envs), state, action, params)
            return (obs, state), (reward, done, info, obs.sum(-1))

        (obs, _), (reward, done, info, value) = jax.lax.scan(body, (obs, state), jax.random.split(key, STEPS))
        return reward, done, info, _gae(reward, value, done, obs.sum(-1)), obs

    reward, done, info, adv, last_obs = jax.jit(run)(jax.random.key(3))
    assert last_obs.shape == (num_envs, d)
    assert reward.shape == done.shape == adv.shape == (STEPS, num_envs) and done.dtype == jnp.bool_
    ended = np.asarray(info["returned_episode"])
    assert ended[EPISODE - 1].all() and ended.sum() == num_envs
    returns = np.asarray(info["returned_episode_returns"])[EPISODE - 1]
    np.testing.assert_allclose(returns, np.asarray(reward)[:EPISODE].sum(0), rtol=1e-6)
    assert (np.asarray(info["returned_episode_lengths"])[EPISODE - 1] == EPISODE).all()
    # what PureJaxRL's debug callback indexes: returns at the steps that end an episode
    assert np.asarray(info["returned_episode_returns"])[ended].shape == (num_envs,)
    assert np.isfinite(np.asarray(adv)).all()


def test_nested_vmap_over_seeds(per_agent):
    """PureJaxRL vmaps its whole training over seeds: the inner vmap over entries still groups economies."""
    params = per_agent.default_params

    def one(keys, action):
        _, state = jax.vmap(per_agent.reset, in_axes=(0, None))(keys, params)
        return jax.vmap(per_agent.step, in_axes=(0, 0, 0, None))(keys, state, action, params)[:3:2]

    keys = jax.random.split(jax.random.key(9), (2, 4))
    action = jax.random.randint(jax.random.key(10), (2, 4), 0, per_agent.num_actions, jnp.int32)
    nested, first, second = jit_fast(lambda k, a: (jax.vmap(one)(k, a), one(k[0], a[0]), one(k[1], a[1])))(keys, action)
    assert nested[0].shape == (2, 4) + per_agent.observation_space().shape
    for i, alone in enumerate((first, second)):
        for got, want in zip(nested, alone):
            np.testing.assert_array_equal(np.asarray(got[i]), np.asarray(want))


def test_alone_is_one_entry_the_others_noop(per_agent, joint):
    """Outside vmap: reset is agent 0's entry; step moves the entry's agent, the others send NO-OP."""
    params = per_agent.default_params
    key = jax.random.key(4)
    obs, state = per_agent.reset(key, params)
    obs_joint, state_joint = joint.reset(key, params)
    np.testing.assert_array_equal(np.asarray(obs), np.asarray(obs_joint[0]))
    assert int(state.agent) == 0
    state = state.replace(agent=jnp.int32(1))
    step = per_agent.step(jax.random.key(5), state, jnp.int32(3), params)
    step_joint = joint.step(jax.random.key(5), state_joint, jnp.array([0, 3], jnp.int32), params)
    np.testing.assert_array_equal(np.asarray(step[0]), np.asarray(step_joint[0][1]))
    assert float(step[2]) == float(step_joint[2][1]) and step[2].shape == ()


def test_per_agent_errors(per_agent):
    params = per_agent.default_params
    keys = jax.random.split(jax.random.key(0), 3)
    with pytest.raises(ValueError, match="multiple of num_agents=2 entries .* got 3"):
        jax.vmap(per_agent.reset, in_axes=(0, None))(keys, params)
    _, state = per_agent.reset(keys[0], params)
    with pytest.raises(ValueError, match=r"action must be an integer array of shape \(\), got int32 \(2,\)"):
        per_agent.step(keys[0], state, jnp.zeros(2, jnp.int32), params)
    with pytest.raises(TypeError, match="state must be the AgentState that reset returns"):
        per_agent.step(keys[0], state.env_state, jnp.int32(0), params)
    with pytest.raises(TypeError, match="agents_as_batch must be True or False"):
        GymnaxEnv(per_agent.env, agents_as_batch="yes")


def test_multi_action_entries_equal_joint_mode_with_remap(jitted_env):
    """Multi-action agents (one action per head): per entry int32 [n_heads]; "remap" per head."""
    econ = jitted_env(TINY_CONFIG).env
    per_agent = GymnaxEnv(econ, agents_as_batch=True, invalid_actions="remap", info_keys=("action_mask",))
    joint = GymnaxEnv(econ, invalid_actions="remap", info_keys=("action_mask",))
    params, n, heads = econ.default_params, per_agent.num_agents, len(per_agent.num_actions)
    keys = jax.random.split(jax.random.key(2), 2 * n)
    action = jax.random.randint(jax.random.key(3), (2 * n, heads), -1, 8, jnp.int32)  # many out of range

    def run(keys, action):
        _, state = jax.vmap(per_agent.reset, in_axes=(0, None))(keys, params)
        _, state_joint = jax.vmap(joint.reset, in_axes=(0, None))(keys[::n], params)
        return (state.env_state.loc, jax.vmap(per_agent.step, in_axes=(0, 0, 0, None))(keys, state, action, params),
                jax.vmap(joint.step, in_axes=(0, 0, 0, None))(keys[::n], state_joint,
                                                              action.reshape(2, n, heads), params))

    loc0, out, out_joint = jit_fast(run)(keys, action)
    assert out[5]["action_mask"].shape == (2 * n, heads, max(per_agent.num_actions))
    np.testing.assert_array_equal(np.asarray(out[0]), np.asarray(out_joint[0]).reshape(2 * n, -1))
    np.testing.assert_array_equal(np.asarray(out[2]), np.asarray(out_joint[2]).reshape(-1))
    np.testing.assert_array_equal(np.asarray(out[1].env_state.loc), np.repeat(np.asarray(out_joint[1].loc), n, 0))
    assert (np.asarray(out[1].env_state.loc) != np.asarray(loc0)).any()  # the actions acted


# ------------------------------------------------------------ invalid actions
@pytest.fixture(scope="module")
def remap_outcomes(small):
    """From one state: ``step_env`` in "remap" mode with an invalid action pair,
    and "noop" mode over every action pair, for the same keys."""
    noop, remap = GymnaxEnv(small), GymnaxEnv(small, invalid_actions="remap")
    params = small.default_params
    n_actions = noop.num_actions
    _, state = noop.reset(jax.random.key(0), params)
    pairs = jnp.stack(jnp.meshgrid(jnp.arange(n_actions), jnp.arange(n_actions), indexing="ij"), -1)
    pairs = pairs.reshape(-1, 2).astype(jnp.int32)
    keys = jax.random.split(jax.random.key(1), 6)

    def run(keys):
        step = lambda env, k, a: env.step_env(k, state, a, params)[1].loc
        invalid = jnp.array([1, 99], jnp.int32)  # Build without resources; out of range
        return (jax.vmap(lambda k: step(remap, k, invalid))(keys),
                jax.vmap(lambda k: step(remap, k, pairs[5]))(keys),
                jax.vmap(lambda k: jax.vmap(lambda a: step(noop, k, a))(pairs))(keys))

    return noop.action_mask(state, params), pairs, state.loc, jit_fast(run)(keys)


def test_remap_replaces_invalid_actions_with_valid_ones(remap_outcomes):
    mask, pairs, loc0, (remapped, valid_pair, grid) = remap_outcomes
    mask, pairs = np.asarray(mask), np.asarray(pairs)
    assert not mask[0, 1]  # Build is invalid at the start
    allowed = mask[0, pairs[:, 0]] & mask[1, pairs[:, 1]]
    for k in range(remapped.shape[0]):
        same = (np.asarray(grid[k]) == np.asarray(remapped[k])).all(axis=(-2, -1))
        assert (same & allowed).any(), "the remapped step is the step of an allowed action pair"
    # somewhere an agent moved instead of idling (NO-OP and Build both keep everyone in place)
    assert (np.asarray(remapped) != np.asarray(loc0)).any()
    # an allowed action is kept: remap mode equals noop mode for it
    assert allowed[5]
    np.testing.assert_array_equal(np.asarray(valid_pair), np.asarray(grid[:, 5]))


def test_noop_mode_idles_on_invalid_actions(remap_outcomes):
    _, pairs, loc0, (_, _, grid) = remap_outcomes
    noop_rows = [i for i, (a, b) in enumerate(np.asarray(pairs)) if a in (0, 1) and b in (0, 1)]
    for i in noop_rows:
        np.testing.assert_array_equal(np.asarray(grid[:, i]), np.broadcast_to(np.asarray(loc0), grid[:, i].shape))


# ------------------------------------------------------------ lean info
def test_info_holds_small_values_unless_asked(small):
    lean = GymnaxEnv(small, agents_as_batch=True, info_keys=())  # the default with step_api="legacy"
    params = lean.default_params
    keys = jax.random.split(jax.random.key(0), 2)
    _, state = jax.eval_shape(jax.vmap(lean.reset, in_axes=(0, None)), keys, params)
    step = jax.vmap(lean.step, in_axes=(0, 0, 0, None))
    info = jax.eval_shape(step, keys, state, jnp.zeros(2, jnp.int32), params)[5]
    assert not set(info) & set(BOTH) and {"terminated", "truncated", "planner_reward"} <= set(info)
    assert all(x.shape[0] == 2 and np.prod(x.shape[1:]) <= 1 for x in jax.tree.leaves(info))
    full = GymnaxEnv(small, agents_as_batch=True, info_keys=("final_observation",))
    info = jax.eval_shape(jax.vmap(full.step, in_axes=(0, 0, 0, None)), keys, state, jnp.zeros(2, jnp.int32),
                          params)[5]
    assert info["final_observation"].shape == (2,) + full.observation_space().shape and "action_mask" not in info


def test_bad_front_options(small):
    with pytest.raises(ValueError, match=r"invalid_actions must be one of \('noop', 'remap'\), got 'random'"):
        GymnaxEnv(small, invalid_actions="random")
    with pytest.raises(TypeError, match=r"info_keys must be None or a tuple of names from \('action_mask', "
                                        r"'final_observation'\), got 'action_mask'"):
        GymnaxEnv(small, info_keys="action_mask")
    with pytest.raises(ValueError, match=r"info_keys must name entries from .* got unknown \['obs'\]"):
        GymnaxEnv(small, info_keys=("obs",))
