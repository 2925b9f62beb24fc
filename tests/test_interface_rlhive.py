"""jaxecon.interfaces.rlhive: RLHive's BaseEnv and ParallelEnv over a jaxecon economy.

The tiny economy of the TF-Agents and checkpoint tests, ``common.TINY_CONFIG``
(one env object through ``jitted_env``, hence one compilation of the host
driver): 2 agents with multi-action heads, a passive planner, 3-step episodes.
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxecon.interfaces import rlhive

from common import TINY_CONFIG, tree_equal


@pytest.fixture(scope="module")
def env(jitted_env):
    return jitted_env(TINY_CONFIG).env


def round_actions(hive_env, rng) -> list:
    """One random action per player, inside its action space."""
    return [rng.integers(0, space.nvec) for space in hive_env.env_spec.action_space]


def test_env_spec_players_and_type_name(env):
    hive_env = rlhive.BaseEnv(env)
    n = env.n_agents
    spec = hive_env.env_spec
    assert spec.env_name == "layout_from_file/simple_wood_and_stone"
    assert hive_env.num_players == n + 1 == spec.env_info["num_players"]
    assert spec.env_info["players"] == ["0", "1", "p"]
    assert spec.observation_space == [env.observation_space("a")] * n + [env.observation_space("p")]
    assert spec.action_space == [env.action_space("a")] * n + [env.action_space("p")]
    assert rlhive.BaseEnv.type_name() == rlhive.ParallelEnv.type_name() == "env"
    assert spec.obs_dim is spec.observation_space and spec.act_dim is spec.action_space
    try:
        from hive.envs.base import BaseEnv as HiveBaseEnv
        from hive.envs.env_spec import EnvSpec as HiveEnvSpec
    except ImportError:
        assert rlhive.BACKEND == "jaxecon"
    else:
        assert rlhive.BACKEND == "rlhive" and isinstance(hive_env, HiveBaseEnv)
        assert isinstance(spec, HiveEnvSpec)
    # RLHive's class order: the parallel base first, then the all-players env
    mro = rlhive.ParallelEnv.__mro__
    assert mro.index(rlhive._Parallel) < mro.index(rlhive.BaseEnv)
    # a Foundation-style config dict builds the same economy
    assert rlhive.BaseEnv(dict(TINY_CONFIG)).env_spec.action_space == spec.action_space


def test_reset_and_step_all_players(env):
    hive_env = rlhive.BaseEnv(env)
    rng = np.random.default_rng(0)
    observation, turn = hive_env.reset()
    assert turn == 0 and len(observation) == hive_env.num_players
    spaces = hive_env.env_spec.observation_space
    dones = []
    for _ in range(env.episode_length):
        observation, reward, done, turn, info = hive_env.step(round_actions(hive_env, rng))
        assert turn == 0 and reward.shape == (hive_env.num_players,) and reward.dtype == np.float32
        for player, obs in enumerate(observation):
            assert bool(spaces[player].contains(obs)), f"player {player}'s observation is outside its space"
        assert isinstance(done, bool) and "social/equality" in info
        dones.append(done)
    assert dones == [False, False, True]
    raw = hive_env._economy.outputs.obs
    np.testing.assert_array_equal(observation[1]["flat"], raw["a"]["flat"][1])
    assert observation[-1] is raw["p"]


def test_parallel_env_steps_one_player_at_a_time(env):
    parallel, whole = rlhive.ParallelEnv(env), rlhive.BaseEnv(env)
    parallel.seed(5)
    whole.seed(5)
    rng = np.random.default_rng(1)
    obs0, turn = parallel.reset()
    full_obs, _ = whole.reset()
    assert turn == 0 and tree_equal(obs0, full_obs[0])
    for _ in range(env.episode_length):
        actions = round_actions(parallel, rng)
        for player, action in enumerate(actions[:-1]):
            obs, reward, done, turn, _ = parallel.step(action)
            assert turn == player + 1 and not done and np.all(reward == 0)
            assert reward.shape == (parallel.num_players,)
        obs, reward, done, turn, info = parallel.step(actions[-1])
        full_obs, full_reward, full_done, _, full_info = whole.step(actions)
        # the planner's action completes the round: the economy steps once, bit for bit as BaseEnv
        assert turn == 0 and tree_equal(obs, full_obs[0])
        assert tree_equal((reward, done, info), (full_reward, full_done, full_info))
    assert done


@pytest.mark.parametrize("cls", [rlhive.BaseEnv, rlhive.ParallelEnv])
def test_save_load_continues_bit_for_bit(env, cls, tmp_path):
    hive_env = cls(env)
    rng = np.random.default_rng(2)
    hive_env.reset()
    if cls is rlhive.BaseEnv:
        steps, cut = [round_actions(hive_env, rng) for _ in range(5)], 1
    else:  # one player's action per step; saved mid-round, with two actions pending
        steps, cut = [a for _ in range(5) for a in round_actions(hive_env, rng)], 2
    for action in steps[:cut]:
        hive_env.step(action)
    hive_env.save(tmp_path / "env")
    later = steps[cut:]  # crosses the episode end (3 steps)
    first = [hive_env.step(a) for a in later]
    first.append(hive_env.reset())
    restored = cls(env)
    restored.load(tmp_path / "env")
    again = [restored.step(a) for a in later]
    again.append(restored.reset())
    assert tree_equal(first, again)


# ----------------------------------------------------------------- bad input
def test_bad_actions_name_the_player(env):
    hive_env = rlhive.BaseEnv(env)
    hive_env.reset()
    ok = round_actions(hive_env, np.random.default_rng(3))
    with pytest.raises(ValueError, match=r"action of player 1 is outside the action space.*allowed"):
        hive_env.step([ok[0], np.array([0, 7]), ok[2]])
    with pytest.raises(ValueError, match=r"action of player 2 must have shape \(1,\)"):
        hive_env.step([ok[0], ok[1], 0])
    with pytest.raises(ValueError, match="sequence of num_players=3 actions"):
        hive_env.step(ok[:2])
    parallel = rlhive.ParallelEnv(env)
    parallel.reset()
    with pytest.raises(ValueError, match="action of player 0 is outside"):
        parallel.step(np.array([2, 0]))
    assert parallel._actions == []  # rejected before it was recorded


def test_bad_save_dirs_and_other_arguments(env, tmp_path):
    hive_env = rlhive.BaseEnv(env)
    with pytest.raises(RuntimeError, match="before reset"):
        hive_env.save(tmp_path / "early")
    hive_env.reset()
    hive_env.step(round_actions(hive_env, np.random.default_rng(4)))
    hive_env.save(tmp_path / "base")
    with pytest.raises(FileNotFoundError, match="no checkpoint directory"):
        hive_env.load(tmp_path / "missing")
    other = rlhive.BaseEnv(dict(TINY_CONFIG, n_agents=3, episode_length=5))
    with pytest.raises(ValueError, match=r"different configuration.*episode_length \(saved 3, this env 5\).*n_agents"):
        other.load(tmp_path / "base")
    with pytest.raises(ValueError, match="written by 'rlhive.BaseEnv', not by 'rlhive.ParallelEnv'"):
        rlhive.ParallelEnv(env).load(tmp_path / "base")
    with pytest.raises(ValueError, match=r"mode must be one of \['rgb_array', 'human'\]"):
        hive_env.render("ansi")
    with pytest.raises(ValueError, match=r"num_players must be 3: n_agents \(2\) plus 1 planner"):
        rlhive.BaseEnv(env, num_players=2)
    with pytest.raises(ValueError, match=r"num_players must be 3: n_agents \(2\) plus 1 planner"):
        rlhive.ParallelEnv(env, num_players=4)
    assert rlhive.ParallelEnv(env, num_players=3).num_players == 3
    with pytest.raises(ValueError, match="seed must be an int >= 0"):
        hive_env.seed(-3)
    with pytest.raises(TypeError, match="env_or_config"):
        rlhive.BaseEnv(None)


def test_seed_render_close(env):
    a, b = rlhive.BaseEnv(env), rlhive.BaseEnv(env)
    a.seed(11)
    b.seed(11)
    assert tree_equal(a.reset(), b.reset())
    a.seed()  # None: a fresh random seed
    rgb = a.render()
    h, w = env.world_size
    assert rgb.shape == (h * 16, w * 16, 3) and rgb.dtype == np.uint8
    assert a.render(mode="human") is None
    a.close()
    assert a._economy._figure is None
