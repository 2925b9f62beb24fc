"""Sanity tests for tests/reference.py (the differential-test harness).

They pin the facts of docs/testing.md (the canonical economy) that every later
differential test relies on: mask and observation sizes, component order,
and that the random policy only takes mask-valid actions.
"""

import numpy as np
import pytest

import reference as R

pytestmark = pytest.mark.reference


def _check_valid(obs, env, actions):
    """Assert every action in `actions` is allowed by the agent's mask."""
    assert set(actions) == {str(a.idx) for a in env.all_agents}
    for agent in env.all_agents:
        key = str(agent.idx)
        mask = R.flat_action_mask(agent, obs[key]["action_mask"])
        act = actions[key]
        if agent.multi_action_mode:
            dims = np.asarray(agent.action_spaces).reshape(-1)
            assert isinstance(act, list) and len(act) == len(dims)
            offsets = np.concatenate([[0], np.cumsum(dims)[:-1]])
            for a, d, off in zip(act, dims, offsets):
                assert isinstance(a, int) and 0 <= a < d
                assert mask[off + a] == 1, (key, act)
        else:
            assert isinstance(act, int) and 0 <= act < mask.size
            assert mask[act] == 1, (key, act)


@pytest.fixture(scope="module")
def canonical():
    env = R.make_reference_env(R.CANONICAL_CONFIG, seed=3)
    return env, env.reset()


def test_canonical_env_layout(canonical):
    env, obs = canonical
    assert [c.name for c in env.components] == [
        "Build",
        "ContinuousDoubleAuction",
        "Gather",
        "PeriodicBracketTax",
    ]
    assert env.n_agents == 4 and env.episode_length == 1000
    assert env.world.world_size == [25, 25]
    assert set(obs) == {"0", "1", "2", "3", "p"}
    for i in "0123":
        assert obs[i]["action_mask"].shape == (50,)
        assert obs[i]["action_mask"][0] == 1
        assert obs[i]["flat"].shape == (136,)
        assert obs[i]["world-map"].shape == (7, 11, 11)
        assert obs[i]["world-idx_map"].shape == (2, 11, 11)
    assert obs["p"]["action_mask"].shape == (154,)
    assert obs["p"]["flat"].shape == (86,)
    assert list(np.asarray(env.world.planner.action_spaces)) == [22] * 7
    # fixed_four_skill_and_loc assigns these build payments by slot
    payments = sorted(env.get_agent(i).state["build_payment"] for i in range(4))
    np.testing.assert_allclose(payments, [11.33, 13.27, 16.47, 22.25], atol=0.01)


def test_random_valid_actions_canonical_50_steps():
    env = R.make_reference_env(R.CANONICAL_CONFIG, seed=5)
    obs = env.reset()
    rng = np.random.default_rng(0)
    chosen = set()
    planner_nonzero = 0
    for _ in range(50):
        actions = R.random_valid_actions(obs, env, rng)
        _check_valid(obs, env, actions)
        chosen.update(actions[str(i)] for i in range(4))
        planner_nonzero += sum(a != 0 for a in actions["p"])
        obs, _, done, _ = env.step(actions)
        assert not done["__all__"]
    # a uniform policy over ~20-50 valid actions visits many of them
    assert len(chosen) >= 10
    # tax period starts at t=0: the planner had 4 valid entries per bracket
    assert planner_nonzero > 0


def test_random_valid_actions_deterministic_given_rng(canonical):
    env, obs = canonical
    a = R.random_valid_actions(obs, env, np.random.default_rng(42))
    b = R.random_valid_actions(obs, env, np.random.default_rng(42))
    assert a == b


def test_random_valid_actions_respects_zero_mask(canonical):
    env, obs = canonical
    # Fake a mask that allows only the last action for agent 0.
    fake = {k: dict(v) for k, v in obs.items()}
    only = np.zeros(50, np.float32)
    only[0] = 0  # even NO-OP masked: the sampler must not assume index 0
    only[49] = 1
    fake["0"]["action_mask"] = only
    for seed in range(5):
        acts = R.random_valid_actions(fake, env, np.random.default_rng(seed))
        assert acts["0"] == 49


def test_gather_build_masks_and_actions():
    env = R.make_reference_env(R.GATHER_BUILD_CONFIG, seed=2)
    assert [c.name for c in env.components] == ["Build", "Gather"]
    obs = env.reset()
    assert obs["0"]["action_mask"].shape == (6,)  # NO-OP, Build, 4 x Gather
    np.testing.assert_array_equal(obs["p"]["action_mask"], [1.0])  # passive
    rng = np.random.default_rng(1)
    for _ in range(30):
        actions = R.random_valid_actions(obs, env, rng)
        _check_valid(obs, env, actions)
        assert actions["p"] == [0]
        obs, _, _, _ = env.step(actions)


def test_multi_action_agents_and_unflattened_masks():
    cfg = dict(R.CANONICAL_CONFIG, multi_action_mode_agents=True, flatten_masks=False)
    env = R.make_reference_env(cfg, seed=4)
    obs = env.reset()
    agent = env.get_agent(0)
    assert isinstance(obs["0"]["action_mask"], dict)
    flat = R.flat_action_mask(agent, obs["0"]["action_mask"])
    assert list(np.asarray(agent.action_spaces)) == [2, 12, 12, 12, 12, 5]
    np.testing.assert_array_equal(flat, agent.flatten_masks(obs["0"]["action_mask"]))
    assert flat.shape == (55,)
    rng = np.random.default_rng(3)
    for _ in range(10):
        actions = R.random_valid_actions(obs, env, rng)
        _check_valid(obs, env, actions)
        obs, _, _, _ = env.step(actions)


def test_uniform10_builds():
    env = R.make_reference_env(R.UNIFORM10_CONFIG, seed=1)
    obs = env.reset()
    assert env.n_agents == 10
    assert obs["9"]["flat"].shape == (142,)
    assert obs["p"]["flat"].shape == (92,)
    assert obs["0"]["world-map"].shape == (6, 11, 11)


def test_configs_are_not_mutated_and_share_kwargs():
    canon = {list(c)[0]: list(c.values())[0] for c in R.CANONICAL_CONFIG["components"]}
    gb = {list(c)[0]: list(c.values())[0] for c in R.GATHER_BUILD_CONFIG["components"]}
    assert gb == {"Build": canon["Build"], "Gather": canon["Gather"]}
    for k, v in R.CANONICAL_CONFIG.items():
        if k != "components":
            assert R.GATHER_BUILD_CONFIG[k] == v
    assert R.CANONICAL_CONFIG["dense_log_frequency"] is None


def test_reference_steps_per_second_short_run():
    res = R.reference_steps_per_second(R.GATHER_BUILD_CONFIG, n_steps=30, seed=1)
    for key in ("env_steps_per_s", "loop_steps_per_s"):
        assert np.isfinite(res[key]) and res[key] > 0
    assert res["loop_steps_per_s"] <= res["env_steps_per_s"]
    assert res["n_steps"] == 30 and res["n_resets"] == 0
    with pytest.raises(ValueError):
        R.reference_steps_per_second(R.GATHER_BUILD_CONFIG, n_steps=0)
