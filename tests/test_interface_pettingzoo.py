"""``jaxecon.interfaces.pettingzoo``: PettingZoo's own API and seed tests, episodes, rendering, bad input.

Skipped when PettingZoo is not installed (the ``pettingzoo`` extra). The economy
is the Gymnasium tests', ``common.shim_config()`` (compiled once; see there).
"""

from __future__ import annotations

import importlib
import sys

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium.spaces import Discrete, MultiDiscrete  # noqa: E402
from gymnasium.utils.env_checker import data_equivalence  # noqa: E402
from pettingzoo.test import parallel_api_test, parallel_seed_test  # noqa: E402

from jaxecon import spaces as jaxecon_spaces  # noqa: E402
from jaxecon.foundation import make_env_instance  # noqa: E402
from jaxecon.interfaces.gym_spaces import AgentSpaces, to_gymnasium  # noqa: E402
from jaxecon.interfaces.pettingzoo import FoundationParallelEnv, parallel_env  # noqa: E402
from jaxecon.render import agent_colors  # noqa: E402

from common import SHIM_EPISODE_LENGTH as EPISODE_LENGTH  # noqa: E402
from common import shim_config  # noqa: E402

AGENTS = ["0", "1", "2", "3", "p"]


def random_episode(env, seed: int) -> list:
    """Observations and rewards of one episode under masked random actions seeded by ``seed``."""
    obs, _ = env.reset(seed=seed)
    for i, agent in enumerate(env.agents):
        env.action_space(agent).seed(100 + i)
    out = [obs]
    while env.agents:
        for a in env.agents:
            assert env.observation_space(a).contains(obs[a]), a
        actions = {a: env.action_space(a).sample(mask=obs[a]["action_mask"]) for a in env.agents}
        obs, rew, _, _, _ = env.step(actions)
        out.append((obs, rew))
    return out


def test_parallel_api_test_passes():
    env = parallel_env(**shim_config())
    parallel_api_test(env, num_cycles=3 * EPISODE_LENGTH)
    assert env.agents == []  # the last episode ran to its time limit


def test_parallel_seed_test_passes():
    parallel_seed_test(lambda: parallel_env(**shim_config()), num_cycles=EPISODE_LENGTH)


def test_spaces_are_foundations():
    env = parallel_env(**shim_config())
    assert env.possible_agents == AGENTS
    assert env.action_space("0") == Discrete(50)  # NO-OP + Build 1 + 4 x 11 trade + 4 moves
    assert env.action_space("p") == MultiDiscrete([22] * 7)  # 7 tax brackets, NO-OP + 21 rates
    assert env.observation_space("0") is env.observation_space("0")
    space = env.observation_space("0")
    assert set(space.spaces) == {"world-map", "world-idx_map", "time", "flat", "action_mask"}
    # jaxecon's declared bounds: finite where bounded, infinite where not (inventories in "flat")
    assert np.all(space["world-map"].low == 0) and np.all(space["world-map"].high == 1)
    np.testing.assert_allclose(space["time"].high, 1, rtol=1e-5)  # 1, widened by rounding slack
    assert np.isinf(space["flat"].high).any()
    assert env.observation_space("1") is not space and env.observation_space("1") == space
    obs, infos = env.reset(seed=0)
    assert infos == {a: {} for a in AGENTS}
    for a in AGENTS:
        assert env.observation_space(a).contains(obs[a]), a
    assert len(obs["p"]["action_mask"]) == 7 and obs["p"]["action_mask"][0].shape == (22,)
    assert obs["0"]["action_mask"].dtype == np.int8 and obs["0"]["action_mask"][0] == 1  # NO-OP allowed


def test_episode_ends_by_truncation_at_the_time_limit():
    env = parallel_env(**shim_config())
    env.reset(seed=1)
    for t in range(1, EPISODE_LENGTH + 1):
        obs, rew, term, trunc, infos = env.step({})  # everyone NO-OP
        assert set(obs) == set(rew) == set(term) == set(trunc) == set(infos) == set(AGENTS)
        assert all(isinstance(r, float) for r in rew.values())
        assert not any(term.values())
        assert all(trunc.values()) == (t == EPISODE_LENGTH) and any(trunc.values()) == (t == EPISODE_LENGTH)
        assert obs["0"]["time"][0] == pytest.approx(t / EPISODE_LENGTH)
    assert env.agents == []
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    env.reset()
    assert env.agents == AGENTS


def test_seed_makes_episodes_reproducible_and_different_seeds_differ():
    a = random_episode(parallel_env(**shim_config()), seed=5)
    b = random_episode(parallel_env(**shim_config()), seed=5)
    c = random_episode(parallel_env(**shim_config()), seed=6)
    assert data_equivalence(a, b)
    assert not data_equivalence(a, c)


def test_render_rgb_array_draws_the_agents_where_they_stand():
    env = parallel_env(**shim_config(), render_mode="rgb_array")
    env.reset(seed=0)
    env.step({a: env.action_space(a).sample() for a in env.agents})
    frame = env.render()
    assert frame.shape == (25 * 16, 25 * 16, 3) and frame.dtype == np.uint8
    colors = agent_colors(4)
    for i, agent in enumerate(env.foundation_env.world.agents):
        r, c = agent.loc
        assert np.array_equal(frame[r * 16 + 8, c * 16 + 8], colors[i]), i
    with pytest.warns(UserWarning, match="render_mode"):
        assert parallel_env(**shim_config()).render() is None


def test_bad_input_is_a_clear_error():
    env = parallel_env(**shim_config())
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    for bad in ("4", 0, "planner"):
        with pytest.raises(ValueError, match="unknown agent"):
            env.observation_space(bad)
        with pytest.raises(ValueError, match="unknown agent"):
            env.action_space(bad)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"unknown agent '7'.*\['0', '1', '2', '3', 'p'\]"):
        env.step({"7": 0})
    with pytest.raises(ValueError, match="agent 0 is out of range; allowed: 0..49"):
        env.step({"0": 50})  # outside Discrete(50)
    with pytest.raises(ValueError, match="agent 'p' is in multi-action mode: expected 7 actions"):
        env.step({"p": [0] * 6})  # the planner has 7 heads
    assert env.foundation_env.world.timestep == 0  # nothing stepped
    with pytest.raises(ValueError, match="render_mode"):
        parallel_env(**shim_config(), render_mode="human")
    with pytest.raises(ValueError, match="collate_agent_step_and_reset_data"):
        parallel_env(**shim_config(), collate_agent_step_and_reset_data=True)
    with pytest.raises(TypeError, match="foundation_config"):
        FoundationParallelEnv("layout_from_file/simple_wood_and_stone")


def test_undeclared_observations_are_read_from_a_reset(monkeypatch):
    """Economies with numpy observation code declare no space: one reset gives the layout, bounds +-inf."""
    env = make_env_instance(**shim_config())

    def undeclared(agent):
        raise NotImplementedError("observations made by host code")

    monkeypatch.setattr(env, "observation_space", undeclared)
    inferred = AgentSpaces(env)
    obs = env.reset()
    for a in AGENTS:
        space = inferred.observation_space(a)
        assert set(space.spaces) == set(obs[a])
        assert space.contains(inferred.observation(a, obs[a]))
    assert np.isinf(inferred.observation_space("0")["world-map"].high).all()
    assert inferred.observation_space("0")["world-idx_map"].high.max() == np.iinfo(np.int16).max


def test_to_gymnasium_keeps_bounds_and_key_order():
    space = jaxecon_spaces.Dict({"z": jaxecon_spaces.Box(0, np.array([1.0, np.inf]), (2,)),
                                 "a": jaxecon_spaces.MultiDiscrete([3, 4]),
                                 "m": jaxecon_spaces.Discrete(5)})
    gym_space = to_gymnasium(space)
    assert list(gym_space.spaces) == ["z", "a", "m"]
    assert np.array_equal(gym_space["z"].high, [1.0, np.inf]) and gym_space["z"].dtype == np.float32
    assert gym_space["a"] == MultiDiscrete([3, 4]) and gym_space["m"] == Discrete(5)
    with pytest.raises(TypeError, match="jaxecon.spaces"):
        to_gymnasium(Discrete(3))


def test_missing_pettingzoo_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "pettingzoo", None)  # import pettingzoo -> ImportError
    monkeypatch.delitem(sys.modules, "jaxecon.interfaces.pettingzoo")
    with pytest.raises(ImportError, match=r'pip install "jaxecon\[pettingzoo\]"'):
        importlib.import_module("jaxecon.interfaces.pettingzoo")
