"""``jaxecon.interfaces.pettingzoo`` on economies with declared agent groups (``GroupsParallelEnv``).

PettingZoo's own API and seed tests on ``builders_and_traders`` (two
mobile-agent types and the planner) and ``gather_build_no_planner`` (no
planner), each on a random 10x10 map with 20-step episodes; every env of one
config shares one compilation (``pettingzoo_groups._economy``). Skipped when
PettingZoo is not installed.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo")

from gymnasium.spaces import Discrete, MultiDiscrete  # noqa: E402
from gymnasium.utils.env_checker import data_equivalence  # noqa: E402
from pettingzoo.test import parallel_api_test, parallel_seed_test  # noqa: E402

from jaxecon.configs import economy_config  # noqa: E402
from jaxecon.interfaces.pettingzoo import GroupsParallelEnv, parallel_env  # noqa: E402
from jaxecon.interfaces.pettingzoo_groups import declares_groups  # noqa: E402
from jaxecon.render import agent_colors  # noqa: E402

EPISODE_LENGTH = 20
SIZE = 10
ECONOMIES = ("builders_and_traders", "gather_build_no_planner")


def small(name: str, **kw) -> dict:
    """``economy_config(name)`` on a random SIZE x SIZE map with EPISODE_LENGTH-step episodes."""
    cfg = economy_config(name)
    for k in ("env_layout_file", "fixed_four_skill_and_loc"):  # the 25x25 layout file's
        cfg.pop(k, None)
    cfg.update(scenario_name="uniform/simple_wood_and_stone", world_size=[SIZE, SIZE],
               episode_length=EPISODE_LENGTH, **kw)
    return cfg


def moves(env, agent) -> list:
    """``agent``'s global action indices that are Gather's moves."""
    layout = env.functional_env.group_actions[env.group_of[agent]]
    return [i for i, (name, _) in layout.single_action_map().items() if name == "Gather"]


@pytest.mark.parametrize("name", ECONOMIES)
def test_parallel_api_test_passes(name):
    env = parallel_env(**small(name))
    assert isinstance(env, GroupsParallelEnv)
    parallel_api_test(env, num_cycles=2 * EPISODE_LENGTH)
    assert env.agents == []  # the last episode ran to its time limit


@pytest.mark.parametrize("name", ECONOMIES)
def test_parallel_seed_test_passes(name):
    parallel_seed_test(lambda: parallel_env(**small(name)), num_cycles=EPISODE_LENGTH)


def test_each_agent_has_its_groups_spaces():
    env = parallel_env(**small("builders_and_traders"))
    assert env.possible_agents == ["0", "1", "2", "3", "p"]
    assert env.group_of == {"0": "builders", "1": "builders", "2": "traders", "3": "traders", "p": "p"}
    assert env.action_space("0") == env.action_space("1") == Discrete(1 + 1 + 4)  # NO-OP, Build, 4 moves
    assert env.action_space("2") == Discrete(1 + 4 * 11 + 4)  # NO-OP, 4 x 11 trade, 4 moves
    assert env.action_space("p") == MultiDiscrete([22] * 7)
    builder, trader = env.observation_space("0"), env.observation_space("2")
    assert env.observation_space("0") is builder and env.observation_space("1") is not builder
    assert env.observation_space("1") == builder and env.observation_space("3") == trader
    # the Foundation format: world-map, world-idx_map, time, flat, action_mask (PettingZoo's form)
    assert set(builder.spaces) == set(trader.spaces) == {"world-map", "world-idx_map", "time", "flat", "action_mask"}
    assert builder["flat"].shape[0] < trader["flat"].shape[0]  # builders do not observe the market
    assert builder["action_mask"].shape == (6,) and trader["action_mask"].shape == (49,)
    assert builder["world-map"].shape == trader["world-map"].shape
    obs, infos = env.reset(seed=0)
    assert set(obs) == set(infos) == set(env.possible_agents)
    for a in env.possible_agents:
        assert env.observation_space(a).contains(obs[a]), a
    assert obs["0"]["flat"].shape != obs["2"]["flat"].shape
    assert obs["0"]["action_mask"].dtype == np.int8 and obs["0"]["action_mask"][0] == 1  # NO-OP allowed
    assert len(obs["p"]["action_mask"]) == 7 and obs["p"]["action_mask"][0].shape == (22,)
    assert obs["p"]["agents"].shape[0] == 4  # the planner's view of the agents, one row each


def test_no_planner_means_no_agent_p():
    env = parallel_env(**small("gather_build_no_planner"))
    assert env.possible_agents == ["0", "1", "2", "3"]
    assert all(env.action_space(a) == Discrete(1 + 1 + 4) for a in env.possible_agents)
    with pytest.raises(ValueError, match=r"unknown agent 'p'"):
        env.observation_space("p")
    obs, _ = env.reset(seed=0)
    _, rew, _, trunc, _ = env.step({})
    assert "p" not in obs and set(rew) == set(trunc) == {"0", "1", "2", "3"}
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"unknown agent 'p'"):
        env.step({"p": [0] * 7})


@pytest.mark.parametrize("agent", ["0", "2"])  # a builder and a trader (row 0 of its group, agent 2)
def test_actions_reach_the_economy(agent):
    env = parallel_env(**small("builders_and_traders"))
    env.reset(seed=3)
    start = np.asarray(env.env_state.loc)
    moved = []
    for action in moves(env, agent):
        env.reset(seed=3)
        _, rew, _, _, _ = env.step({agent: action})
        loc = np.asarray(env.env_state.loc)
        others = [i for i in range(4) if i != int(agent)]
        np.testing.assert_array_equal(loc[others], start[others])  # NO-OPs stay
        moved.append(not np.array_equal(loc[int(agent)], start[int(agent)]))
    assert any(moved)  # some direction is free on the map
    env.reset(seed=3)
    _, noop_rew, _, _, _ = env.step({})
    env.reset(seed=3)
    _, move_rew, _, _, _ = env.step({agent: moves(env, agent)[moved.index(True)]})
    assert move_rew[agent] < noop_rew[agent]  # moving costs labor


def test_episode_ends_by_truncation_and_the_next_one_carries_over():
    env = parallel_env(**small("builders_and_traders"))
    env.reset(seed=1)
    for t in range(1, EPISODE_LENGTH + 1):
        obs, rew, term, trunc, infos = env.step({})
        assert set(obs) == set(rew) == set(term) == set(trunc) == set(infos) == set(env.possible_agents)
        assert all(isinstance(r, float) for r in rew.values())
        assert not any(term.values())
        assert all(trunc.values()) == (t == EPISODE_LENGTH) and any(trunc.values()) == (t == EPISODE_LENGTH)
        assert obs["2"]["time"][0] == pytest.approx(t / EPISODE_LENGTH)
    assert env.agents == []
    with pytest.raises(RuntimeError, match="reset.*ended"):
        env.step({})
    env.reset()
    assert env.agents == env.possible_agents and int(env.env_state.completions) == 1


def test_seed_makes_resets_reproducible_and_different_seeds_differ():
    a, b = parallel_env(**small("gather_build_no_planner")), parallel_env(**small("gather_build_no_planner"))
    obs_a, obs_b = a.reset(seed=7)[0], b.reset(seed=7)[0]
    assert data_equivalence(obs_a, obs_b)
    assert not data_equivalence(obs_a, a.reset(seed=8)[0])
    assert data_equivalence(a.reset(seed=7)[0], obs_b)  # reseeding restarts the key stream


def test_render_draws_the_agents_where_they_stand():
    env = parallel_env(**small("builders_and_traders"), render_mode="rgb_array")
    env.reset(seed=0)
    env.step({a: env.action_space(a).sample() for a in env.agents})
    frame = env.render()
    assert frame.shape == (SIZE * 16, SIZE * 16, 3) and frame.dtype == np.uint8
    colors = agent_colors(4)
    for i, (r, c) in enumerate(np.asarray(env.env_state.loc)):
        assert np.array_equal(frame[r * 16 + 8, c * 16 + 8], colors[i]), i
    with pytest.warns(UserWarning, match="render_mode"):
        assert parallel_env(**small("builders_and_traders")).render() is None


def test_bad_input_is_a_clear_error():
    env = parallel_env(**small("builders_and_traders"))
    with pytest.raises(RuntimeError, match="reset"):
        env.step({})
    for bad in ("4", 0, "builders"):
        with pytest.raises(ValueError, match="unknown agent"):
            env.observation_space(bad)
        with pytest.raises(ValueError, match="unknown agent"):
            env.action_space(bad)
    with pytest.raises(ValueError, match="seed"):
        env.reset(seed=-1)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"unknown agent '7'.*\['0', '1', '2', '3', 'p'\]"):
        env.step({"7": 0})
    with pytest.raises(ValueError, match=r"agent '0' must be in its action space Discrete\(6\).*got 6"):
        env.step({"0": 6})  # a trader's action, outside the builders' Discrete(6)
    with pytest.raises(ValueError, match=r"agent '2'.*got 1.0"):
        env.step({"2": 1.0})
    with pytest.raises(ValueError, match=r"agent 'p'.*shape \(7,\)"):
        env.step({"p": [0] * 6})  # the planner has 7 heads
    with pytest.raises(ValueError, match="dict"):
        env.step([0, 0, 0, 0, 0])
    assert int(env.env_state.timestep) == 0  # nothing stepped
    with pytest.raises(NotImplementedError):  # PettingZoo's global state(): not the EnvState (env_state)
        env.state()
    with pytest.raises(ValueError, match="render_mode"):
        parallel_env(**small("builders_and_traders"), render_mode="human")
    with pytest.raises(ValueError, match="collate_agent_step_and_reset_data"):
        parallel_env(**small("builders_and_traders"), collate_agent_step_and_reset_data=True)
    with pytest.raises(ValueError, match="n_planners"):
        parallel_env(**small("gather_build_no_planner", n_planners=2))
    with pytest.raises(TypeError, match="foundation_config"):
        GroupsParallelEnv([("scenario_name", "uniform/simple_wood_and_stone")])


def test_only_configs_with_groups_leave_the_shim():
    assert declares_groups(economy_config("builders_and_traders"))
    assert declares_groups(economy_config("gather_build_no_planner"))
    assert not declares_groups(economy_config("gather_build"))
    assert not declares_groups({**economy_config("gather_build"), "n_planners": 1})
