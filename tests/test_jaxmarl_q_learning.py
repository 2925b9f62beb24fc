"""JaxMARL's ``CTRolloutManager`` over ``MultiAgentEnv``, and a tiny Q-learning loop on it.

Every JaxMARL Q-learning baseline (IQL, VDN, QMIX, PQN) builds
``jaxmarl.wrappers.baselines.CTRolloutManager`` first: it batches
``batch_size`` envs, pads each agent's observation and appends a one-hot
agent id, and adds a global state ``obs["__all__"]`` and a global reward
``rewards["__all__"]``. Here it wraps the JaxMARL front of a small economy
(Build and Gather, two agents, 5-step episodes), and a Q-learning loop in
the shape of JaxMARL's PQN (no replay buffer: each update collects a few
steps from every env, then takes gradient steps on them) trains a shared MLP
Q-network with epsilon-greedy actions restricted to ``get_avail_actions``.
Skipped without JaxMARL.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxecon.configs import gather_build_config
from jaxecon.wrappers import MultiAgentEnv

from common import jit_fast, two_agents

baselines = pytest.importorskip("jaxmarl.wrappers.baselines")

EPISODE = 5
BATCH = 4  # envs in CTRolloutManager's batch
NUM_STEPS = 6  # steps per update and env
UPDATES = 3
EPOCHS = 4  # gradient steps per update, on that update's transitions
GAMMA = 0.9
EPSILON = 0.3


@pytest.fixture(scope="module")
def manager(jitted_env):
    menv = MultiAgentEnv(jitted_env(two_agents(gather_build_config(), EPISODE)).env)
    return baselines.CTRolloutManager(menv, batch_size=BATCH)


def make_train(manager):
    """``(network, train)``, ``train(key) -> (params_before, params_after, losses [UPDATES, EPOCHS], traj)``:
    PQN-style Q-learning, one Q-network shared by the agents (its input carries the agent's one-hot id)."""
    import flax.linen as nn
    import optax

    agents = manager.agents
    n_actions = manager.max_action_space

    class QNetwork(nn.Module):
        @nn.compact
        def __call__(self, x):
            return nn.Dense(n_actions)(nn.relu(nn.Dense(64)(x)))

    network = QNetwork()
    tx = optax.adam(1e-3)

    def masked_max(q, mask):
        return jnp.max(jnp.where(mask, q, -jnp.inf), axis=-1)

    def train(key):
        key, k_init, k_reset = jax.random.split(key, 3)
        params = network.init(k_init, jnp.zeros((manager.obs_size,)))
        opt_state = tx.init(params)
        obs, env_state = manager.batch_reset(k_reset)

        def env_step(carry, key):
            params, obs, env_state = carry
            k_eps, k_rand, k_step = jax.random.split(key, 3)
            avail = jax.vmap(manager.get_avail_actions)(env_state)  # {agent: bool [BATCH, n_actions]}
            x = jnp.stack([obs[a] for a in agents])  # [agents, BATCH, obs_size]
            mask = jnp.stack([avail[a] for a in agents])
            q = network.apply(params, x)
            greedy = jnp.argmax(jnp.where(mask, q, -jnp.inf), axis=-1)
            explore = jax.random.categorical(k_rand, jnp.where(mask, 0.0, -jnp.inf))
            action = jnp.where(jax.random.uniform(k_eps, greedy.shape) < EPSILON, explore, greedy)
            actions = {a: action[i] for i, a in enumerate(agents)}
            obs2, env_state2, rewards, dones, _ = manager.batch_step(k_step, env_state, actions)
            tr = dict(x=x, mask=mask, action=action, reward=jnp.stack([rewards[a] for a in agents]),
                      done=dones["__all__"], global_reward=rewards["__all__"], global_state=obs2["__all__"],
                      next_x=jnp.stack([obs2[a] for a in agents]))
            return (params, obs2, env_state2), tr

        def update(carry, key):
            params, opt_state, obs, env_state = carry
            (_, obs, env_state2), traj = jax.lax.scan(env_step, (params, obs, env_state),
                                                      jax.random.split(key, NUM_STEPS))
            # next-state masks: those at each step's resulting state (the next row; the last from env_state2)
            last_avail = jax.vmap(manager.get_avail_actions)(env_state2)
            next_mask = jnp.concatenate([traj["mask"][1:], jnp.stack([last_avail[a] for a in agents])[None]])
            target = traj["reward"] + GAMMA * (1.0 - traj["done"][:, None]) * masked_max(
                network.apply(params, traj["next_x"]), next_mask)  # fixed for this update's epochs

            def loss_fn(p):
                q = network.apply(p, traj["x"])
                q_taken = jnp.take_along_axis(q, traj["action"][..., None], axis=-1)[..., 0]
                return jnp.mean(jnp.square(q_taken - target))

            def epoch(carry, _):
                params, opt_state = carry
                loss, grads = jax.value_and_grad(loss_fn)(params)
                updates, opt_state = tx.update(grads, opt_state)
                return (optax.apply_updates(params, updates), opt_state), loss

            (params, opt_state), losses = jax.lax.scan(epoch, (params, opt_state), None, EPOCHS)
            return (params, opt_state, obs, env_state2), (losses, traj)

        (trained, *_), (losses, traj) = jax.lax.scan(update, (params, opt_state, obs, env_state),
                                                     jax.random.split(key, UPDATES))
        return params, trained, losses, traj

    return network, train


@pytest.fixture(scope="module")
def trained(manager):
    network, train = make_train(manager)
    return network, jit_fast(train)(jax.random.key(0))


def test_ct_rollout_manager_batches_the_front(manager):
    menv = manager._env
    obs_dim = menv.observation_space("0").shape[0]
    assert manager.agents == ["0", "1"] and manager.training_agents == ["0", "1"]
    assert manager.max_obs_length == obs_dim and manager.obs_size == obs_dim + 2  # + one-hot agent id
    assert manager.max_action_space == menv.action_space("0").n
    obs, state = manager.batch_reset(jax.random.key(1))
    assert obs["0"].shape == obs["1"].shape == (BATCH, obs_dim + 2)
    np.testing.assert_array_equal(np.asarray(obs["1"][:, obs_dim:]), np.tile([0.0, 1.0], (BATCH, 1)))
    assert obs["__all__"].shape == (BATCH, 2 * obs_dim)
    actions = {a: manager.batch_sample(jax.random.fold_in(jax.random.key(2), i), a)
               for i, a in enumerate(manager.agents)}
    assert actions["0"].shape == (BATCH,)
    obs, state, rewards, dones, infos = manager.batch_step(jax.random.key(3), state, actions)
    assert rewards["0"].shape == dones["__all__"].shape == (BATCH,)
    np.testing.assert_allclose(np.asarray(rewards["__all__"]), np.asarray(rewards["0"] + rewards["1"]), rtol=1e-6)
    assert all(x.shape == (BATCH, 2) for x in jax.tree.leaves(infos))  # lean infos: one scalar per agent


@pytest.mark.slow
def test_q_learning_runs_and_learns(manager, trained):
    network, (before, after, losses, traj) = trained
    obs_size = manager.obs_size
    assert traj["x"].shape == (UPDATES, NUM_STEPS, 2, BATCH, obs_size)
    assert traj["global_state"].shape == (UPDATES, NUM_STEPS, BATCH, 2 * (obs_size - 2))
    losses = np.asarray(losses)
    assert losses.shape == (UPDATES, EPOCHS) and np.isfinite(losses).all()
    assert (losses[:, -1] < losses[:, 0]).all()  # each update's gradient steps fit its targets
    # epsilon-greedy never picks an action the mask forbids
    taken = np.take_along_axis(np.asarray(traj["mask"]), np.asarray(traj["action"])[..., None], axis=-1)
    assert taken.all()
    np.testing.assert_allclose(np.asarray(traj["global_reward"]), np.asarray(traj["reward"]).sum(axis=2), rtol=1e-6)
    done = np.asarray(traj["done"]).reshape(UPDATES * NUM_STEPS, BATCH)
    np.testing.assert_array_equal(np.flatnonzero(done[:, 0]), np.arange(EPISODE - 1, UPDATES * NUM_STEPS, EPISODE))
    x = traj["x"][0, 0]  # the first step's observations, [BATCH, obs_size]
    assert not np.allclose(np.asarray(network.apply(before, x)), np.asarray(network.apply(after, x)))
