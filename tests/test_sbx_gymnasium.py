"""sbx's PPO (Stable-Baselines3's API in JAX), unchanged, trains one mobile agent through
jaxecon's Gymnasium interface (the ``thirdparty`` extra installs sbx-rl with the
CPU build of torch that Stable-Baselines3 imports; skipped without it).

The user's code is Stable-Baselines3's: a Gymnasium env, flattened for an MLP,
handed to ``PPO("MlpPolicy", env)``; only the env line names jaxecon.
"""

from __future__ import annotations

import numpy as np
import pytest

from common import shim_config

sbx = pytest.importorskip("sbx")
gymnasium = pytest.importorskip("gymnasium")

pytestmark = pytest.mark.slow  # a long check: deselected unless -m names it

N_STEPS = 32


def test_sbx_ppo_trains_one_agent_on_the_gymnasium_interface():
    from jaxecon.interfaces.gymnasium import FoundationGymEnv

    env = gymnasium.wrappers.FlattenObservation(FoundationGymEnv(shim_config(), learner="0", policies="random"))
    model = sbx.PPO("MlpPolicy", env, n_steps=N_STEPS, batch_size=N_STEPS, n_epochs=1, seed=0,
                    policy_kwargs={"net_arch": [16]})
    before = [np.asarray(x).copy() for x in _leaves(model.policy.actor_state.params)]
    model.learn(total_timesteps=2 * N_STEPS)
    after = [np.asarray(x) for x in _leaves(model.policy.actor_state.params)]

    assert model.num_timesteps == 2 * N_STEPS
    assert any(not np.array_equal(a, b) for a, b in zip(before, after)), "PPO updated the policy"
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, deterministic=True)
    assert env.action_space.contains(int(action))
    _, reward, terminated, truncated, info = env.step(int(action))
    assert np.isfinite(reward) and not terminated and set(info["rewards"]) == {"0", "1", "2", "3", "p"}


def _leaves(tree):
    import jax

    return jax.tree.leaves(tree)
