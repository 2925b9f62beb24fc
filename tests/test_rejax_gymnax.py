"""rejax's PPO, unchanged and with no edit at all, trains the mobile agents
through ``GymnaxEnv`` in per-agent mode (the ``thirdparty`` extra installs
rejax; skipped without it).

rejax is single-agent gymnax code: it vmaps ``env.reset``/``env.step`` over
``num_envs`` entries, unpacks the five legacy values, expects a scalar reward
per entry, and evaluates with its own ``evaluate`` (a ``while_loop`` per
entry until ``done``, at most ``env_params.max_steps_in_episode`` steps,
over 128 entries). jaxecon's params carry ``max_steps_in_episode`` (the
episode length), so rejax's default evaluation runs as it is.

The second test is the regression of issue 41: on the README's economy
(``phase1``, the labor cost warming up as the agents earn), a mask-blind
learner trained for a small fixed budget builds at the full labor cost
instead of settling on NO-OP.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon.configs import economy_config, gather_build_config
from jaxecon.wrappers import GymnaxEnv

from common import two_agents

rejax = pytest.importorskip("rejax")

pytestmark = pytest.mark.slow  # long checks: deselected unless -m names them

EPISODE = 5
NUM_ENVS = 4  # two economies of two agents
REJAX_EVAL_ENTRIES = 128  # rejax's default evaluation: 128 entries, vmapped


def test_rejax_ppo_trains_on_per_agent_mode_without_edits(jitted_env):
    econ = jitted_env(two_agents(gather_build_config(), EPISODE)).env
    env = GymnaxEnv(econ, step_api="legacy", agents_as_batch=True, invalid_actions="remap")
    assert env.default_params.max_steps_in_episode == EPISODE
    algo = rejax.PPO.create(env=env, num_envs=NUM_ENVS, num_steps=8, num_epochs=1, num_minibatches=2,
                            total_timesteps=3 * NUM_ENVS * 8, eval_freq=NUM_ENVS * 8,
                            skip_initial_evaluation=True, agent_kwargs={"hidden_layer_sizes": (16,)})
    initial = algo.init_state(jax.random.key(0))
    ts, (lengths, returns) = jax.jit(algo.train)(train_state=initial)

    assert int(ts.global_step) == 3 * NUM_ENVS * 8
    assert ts.last_obs.shape == (NUM_ENVS,) + env.observation_space().shape
    changed = jax.tree.map(lambda a, b: bool((a != b).any()), initial.actor_ts.params, ts.actor_ts.params)
    assert all(jax.tree.leaves(changed)), "every actor parameter moved"
    # rejax's own evaluation: every entry's episode ends at the time limit it read from the params
    assert lengths.shape == returns.shape == (3, REJAX_EVAL_ENTRIES)
    np.testing.assert_array_equal(np.asarray(lengths), EPISODE)
    assert np.isfinite(np.asarray(returns)).all() and np.abs(np.asarray(returns)).sum() > 0


PHASE1_ENTRIES = 16  # 4 economies of the phase1 economy's 4 agents
PHASE1_TIMESTEPS = 16 * 128 * 12  # 12 updates of 16 entries x 128 steps


def test_rejax_ppo_on_phase1_beats_noop_on_productivity():
    """Mask-blind PPO (rejax's, remap) for a small fixed budget on ``phase1``, evaluated
    at the full labor cost: its productivity (coin produced) beats NO-OP's, which is 0."""
    cfg = economy_config("phase1")
    env = GymnaxEnv(jaxecon.make_from_config(cfg), step_api="legacy", agents_as_batch=True,
                    invalid_actions="remap")
    algo = rejax.PPO.create(env=env, num_envs=PHASE1_ENTRIES, num_steps=128, num_epochs=4, num_minibatches=4,
                            total_timesteps=PHASE1_TIMESTEPS, eval_freq=PHASE1_TIMESTEPS,
                            skip_initial_evaluation=True)
    ts, _ = jax.jit(algo.train)(train_state=algo.init_state(jax.random.key(0)))

    full_cost = GymnaxEnv(jaxecon.make_from_config(cfg | {"energy_warmup_constant": 0}), step_api="legacy",
                          agents_as_batch=True, invalid_actions="remap")
    params = full_cost.default_params
    act = algo.make_act(ts)

    def productivity(policy, key):
        obs, state = jax.vmap(full_cost.reset, in_axes=(0, None))(jax.random.split(key, PHASE1_ENTRIES), params)

        def body(carry, key):
            obs, state = carry
            k_act, k_step = jax.random.split(key)
            action = policy(obs, k_act)
            obs, state, _, _, info = jax.vmap(full_cost.step, in_axes=(0, 0, 0, None))(
                jax.random.split(k_step, PHASE1_ENTRIES), state, action, params)
            return (obs, state), info["social/productivity"]

        _, prod = jax.lax.scan(body, (obs, state), jax.random.split(key, cfg["episode_length"] - 1))
        return float(prod[-1].mean())  # the step before the episode's last: the auto-reset has not run

    key = jax.random.key(1)
    trained = productivity(lambda obs, k: jax.vmap(act)(obs, jax.random.split(k, obs.shape[0])), key)
    noop = productivity(lambda obs, k: jnp.zeros(obs.shape[0], jnp.int32), key)
    assert noop == 0.0
    assert trained > noop, f"the trained policy produced {trained} coin per economy, NO-OP {noop}"
