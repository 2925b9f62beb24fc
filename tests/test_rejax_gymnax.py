"""rejax's PPO, unchanged, trains the mobile agents of a small economy through
``GymnaxEnv`` in per-agent mode (the ``thirdparty`` extra installs rejax;
skipped without it).

rejax is single-agent gymnax code: it vmaps ``env.reset``/``env.step`` over
``num_envs`` entries, unpacks the five legacy values, expects a scalar reward
per entry, and evaluates with its own ``evaluate`` (a ``while_loop`` per
entry until ``done``). Only the evaluation callback is ours: rejax's default
reads ``env_params.max_steps_in_episode``, a gymnax field jaxecon's params do
not have, so we pass the episode length to rejax's ``evaluate`` ourselves.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

from jaxecon.configs import gather_build_config
from jaxecon.wrappers import GymnaxEnv

from common import two_agents

rejax = pytest.importorskip("rejax")
from rejax.evaluate import evaluate  # noqa: E402

pytestmark = pytest.mark.slow  # a long check: deselected unless -m names it

EPISODE = 5
NUM_ENVS = 4  # two economies of two agents
EVAL_ENTRIES = 8


def test_rejax_ppo_trains_on_per_agent_mode(jitted_env):
    econ = jitted_env(two_agents(gather_build_config(), EPISODE)).env
    env = GymnaxEnv(econ, step_api="legacy", agents_as_batch=True, invalid_actions="remap")
    algo = rejax.PPO.create(env=env, env_params=env.default_params, num_envs=NUM_ENVS, num_steps=8,
                            num_epochs=1, num_minibatches=2, total_timesteps=3 * NUM_ENVS * 8,
                            eval_freq=NUM_ENVS * 8, skip_initial_evaluation=True,
                            agent_kwargs={"hidden_layer_sizes": (16,)})
    algo = algo.replace(eval_callback=lambda algo, ts, rng: evaluate(
        algo.make_act(ts), rng, env, env.default_params, EVAL_ENTRIES, EPISODE))
    initial = algo.init_state(jax.random.key(0))
    ts, (lengths, returns) = jax.jit(algo.train)(train_state=initial)

    assert int(ts.global_step) == 3 * NUM_ENVS * 8
    assert ts.last_obs.shape == (NUM_ENVS,) + env.observation_space().shape
    changed = jax.tree.map(lambda a, b: bool((a != b).any()), initial.actor_ts.params, ts.actor_ts.params)
    assert all(jax.tree.leaves(changed)), "every actor parameter moved"
    # rejax's evaluation: every entry's episode ends at the time limit (done reached each entry)
    assert lengths.shape == returns.shape == (3, EVAL_ENTRIES)
    np.testing.assert_array_equal(np.asarray(lengths), EPISODE)
    assert np.isfinite(np.asarray(returns)).all() and np.abs(np.asarray(returns)).sum() > 0
