"""``jaxecon.interfaces.gymnasium``: Gymnasium's ``check_env``, the registered id, fixed policies, seeding, bad input.

Skipped when Gymnasium is not installed (the ``gymnasium`` extra). The economy
is ``common.shim_config()``, the canonical Gather-Trade-Build economy with
15-step episodes: the shim compiles it once per process for every env built
here and in the PettingZoo tests, and it is the economy of the shim engine tests
too (test_foundation_engine.py), so in a whole-suite run its compiled
functions come from JAX's persistent compilation cache.
"""

from __future__ import annotations

import importlib
import sys

import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.spaces import Discrete, MultiDiscrete  # noqa: E402
from gymnasium.utils.env_checker import check_env, data_equivalence  # noqa: E402

from jaxecon.interfaces.gymnasium import ENV_ID, FoundationGymEnv  # noqa: E402

from common import SHIM_EPISODE_LENGTH as EPISODE_LENGTH  # noqa: E402
from common import shim_config  # noqa: E402


def episode(env, seed: int) -> list:
    """Observations and rewards of one episode, the learner cycling through its first actions."""
    obs, _ = env.reset(seed=seed)
    out = [obs]
    for t in range(EPISODE_LENGTH):
        obs, reward, _, _, info = env.step(t % 5)
        out.append((obs, reward, info))
    return out


@pytest.mark.parametrize("learner", ["1", "p"])
def test_check_env_passes(learner):
    policies = {"0": "random", "p": "random", "2": lambda obs: 3}
    policies.pop(learner, None)
    # through gymnasium.make, so that check_env also builds it again with each render mode from its spec
    env = gymnasium.make(ENV_ID, foundation_config=shim_config(), learner=learner, policies=policies,
                         render_mode="rgb_array").unwrapped
    check_env(env)
    assert env.render().shape == (25 * 16, 25 * 16, 3)
    assert isinstance(env.action_space, MultiDiscrete if learner == "p" else Discrete)


def test_registered_id_runs_an_episode_to_its_time_limit():
    env = gymnasium.make(ENV_ID, foundation_config=shim_config(), policies="random", learner=2)
    assert env.spec.id == ENV_ID
    obs, info = env.reset(seed=3)
    assert env.observation_space.contains(obs) and info == {}
    for t in range(1, EPISODE_LENGTH + 1):
        obs, reward, terminated, truncated, info = env.step(env.action_space.sample(mask=obs["action_mask"]))
        assert env.observation_space.contains(obs)
        assert set(info["rewards"]) == {"0", "1", "2", "3", "p"} and reward == info["rewards"]["2"]
        assert not terminated and truncated == (t == EPISODE_LENGTH)
    with pytest.raises(RuntimeError, match="reset"):
        env.unwrapped.step(0)


def test_fixed_policies_act_on_their_own_observations():
    seen = []

    def sell_wood(obs):
        seen.append(obs)
        return 35  # ContinuousDoubleAuction.Sell_Wood, price 0

    env = FoundationGymEnv(shim_config(), learner="0", policies={"3": sell_wood})
    obs, _ = env.reset(seed=0)
    env.step(0)
    env.step(0)
    assert len(seen) == 2
    assert all(env.agent_spaces.observation_space("3").contains(o) for o in seen)
    assert seen[1]["time"][0] == pytest.approx(1 / EPISODE_LENGTH)
    assert not data_equivalence(seen[0], obs)  # agent 3's view, not the learner's


def test_seed_makes_episodes_reproducible_and_different_seeds_differ():
    def make():
        return FoundationGymEnv(shim_config(), learner="1", policies="random")

    a, b, c = episode(make(), seed=11), episode(make(), seed=11), episode(make(), seed=12)
    assert data_equivalence(a, b)
    assert not data_equivalence(a, c)


def test_noop_policies_leave_their_agents_in_place():
    env = FoundationGymEnv(shim_config(), learner="0", policies="noop")
    env.reset(seed=0)
    start = {i: env.foundation_env.get_agent(i).loc for i in range(1, 4)}
    learner_locs = set()
    for action in (46, 47, 48, 49, 46, 47, 48, 49):  # the learner moves in each direction
        env.step(action)
        learner_locs.add(tuple(env.foundation_env.get_agent(0).loc))
    assert len(learner_locs) > 1
    assert {i: env.foundation_env.get_agent(i).loc for i in range(1, 4)} == start


def test_bad_input_is_a_clear_error():
    cfg = shim_config()
    for learner in ("4", 4, "planner", None):
        with pytest.raises(ValueError, match=r"learner must be one of the agents \['0', '1', '2', '3', 'p'\]"):
            FoundationGymEnv(cfg, learner=learner)
    with pytest.raises(ValueError, match=r"policy 'greedy' of agent '1' is unknown.*\['noop', 'random'\]"):
        FoundationGymEnv(cfg, policies={"1": "greedy"})
    with pytest.raises(ValueError, match="unknown agent '9'"):
        FoundationGymEnv(cfg, policies={"9": "noop"})
    with pytest.raises(ValueError, match="fixed policy to the learner '0'"):
        FoundationGymEnv(cfg, learner="0", policies={"0": "noop"})
    with pytest.raises(TypeError, match="policy of agent '1'"):
        FoundationGymEnv(cfg, policies={"1": 3})
    with pytest.raises(ValueError, match="render_mode"):
        FoundationGymEnv(cfg, render_mode="human")
    with pytest.raises(ValueError, match="flatten_masks"):
        FoundationGymEnv(dict(cfg, flatten_masks=False))

    env = FoundationGymEnv(cfg, learner="0", policies={"1": lambda obs: 99})
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="agent 1 is out of range"):
        env.step(0)  # the fixed policy's action is checked too
    env = FoundationGymEnv(cfg, learner="0")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="agent 0 is out of range"):
        env.step(50)
    assert env.foundation_env.world.timestep == 0


def test_missing_gymnasium_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "gymnasium", None)  # import gymnasium -> ImportError
    monkeypatch.delitem(sys.modules, "jaxecon.interfaces.gymnasium")
    monkeypatch.delitem(sys.modules, "jaxecon.interfaces.gym_spaces")
    with pytest.raises(ImportError, match=r'pip install "jaxecon\[gymnasium\]"'):
        importlib.import_module("jaxecon.interfaces.gymnasium")
    with pytest.raises(ImportError, match=r'pip install "jaxecon\[gymnasium\]"'):
        importlib.import_module("jaxecon.interfaces.gym_spaces")
