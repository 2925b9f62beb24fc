"""Foundation's input and output formats, against ai-economist 1.7.1.

Observation dicts come in Foundation's key order (``world-*``, ``time``, the
components' fields in list order, ``flat``, the planner's ``p<i>``,
``action_mask``) with Foundation's containers (``time`` a one-element list,
scalars as numbers, arrays with Foundation's shapes), flattened or not, masks
flattened or not. With ``collate_agent_step_and_reset_data`` (COVID-19, the
scenario Foundation collates) observations, also with ``flatten_observations``,
rewards, infos and the dense log are structured exactly as Foundation's. A
single-action agent's action may be a 1-element array or list.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from jaxecon import foundation
from jaxecon.scenarios.covid19.config import default_covid_config

from parity import kind
from reference import CANONICAL_CONFIG, make_reference_env, random_valid_actions, require_foundation

pytestmark = pytest.mark.reference

T = 3


def _pair(cfg):
    ref = make_reference_env(copy.deepcopy(cfg))
    env = foundation.make_env_instance(**copy.deepcopy(cfg))
    return env, ref


# ---------------------------------------------------------------- observations
@pytest.mark.parametrize("flatten_observations, flatten_masks, multi", [
    (True, True, False), (False, True, False), (False, False, False), (True, True, True),
])
def test_observation_dicts_have_foundations_order_and_containers(flatten_observations, flatten_masks, multi):
    require_foundation()
    cfg = copy.deepcopy(CANONICAL_CONFIG)
    cfg.update(episode_length=T, flatten_observations=flatten_observations, flatten_masks=flatten_masks,
               planner_gets_spatial_info=True, multi_action_mode_agents=multi)
    env, ref = _pair(cfg)
    obs, ref_obs = env.reset(), ref.reset()
    assert kind(obs) == kind(ref_obs)
    rng = np.random.default_rng(0)
    for _ in range(T):
        obs, rew, done, info = env.step(random_valid_actions(obs, env, rng))
        ref_obs, ref_rew, ref_done, ref_info = ref.step(random_valid_actions(ref_obs, ref, rng))
        assert kind(obs) == kind(ref_obs)
        assert kind(rew) == kind(ref_rew) and info == ref_info and done == ref_done
    assert obs["0"]["time"] == ref_obs["0"]["time"] == [1.0]


# ---------------------------------------------------------------- collate (COVID-19)
@pytest.fixture(scope="module", params=[False, True], ids=["unflattened", "flattened"])
def covid_pair(request):
    require_foundation()
    cfg = default_covid_config()
    cfg.update(episode_length=T, flatten_observations=request.param, dense_log_frequency=1)
    return _pair(cfg)


def _covid_actions(t: int) -> dict:
    acts = {str(i): (t + i) % 11 for i in range(51)}
    acts["p"] = t % 21
    return acts


def test_collated_observations_rewards_infos_match_foundation(covid_pair):
    env, ref = covid_pair
    obs, ref_obs = env.reset(), ref.reset()
    assert kind(obs) == kind(ref_obs)
    assert isinstance(obs["a"]["time"], np.ndarray) and obs["a"]["time"].dtype == ref_obs["a"]["time"].dtype
    assert obs["p"]["time"] == ref_obs["p"]["time"] == [0.0]
    for t in range(T):
        obs, rew, done, info = env.step(_covid_actions(t))
        ref_obs, ref_rew, ref_done, ref_info = ref.step(_covid_actions(t))
        assert kind(obs) == kind(ref_obs), t
        assert kind(rew) == kind(ref_rew), t  # ndarray "a" (a list on the dense-logged last step)
        assert type(rew["a"]) is type(ref_rew["a"])
        assert info == ref_info == {"a": {}, "p": {}}
        assert done == ref_done
        np.testing.assert_allclose(rew["a"], ref_rew["a"], rtol=1e-4, atol=1e-6)


def test_collated_dense_log_matches_foundation(covid_pair):
    env, ref = covid_pair
    for e in (env, ref):
        e.reset(force_dense_logging=True)
        for t in range(T):
            e.step(_covid_actions(t))
    ours, theirs = env._dense_log, ref._dense_log
    assert ours is env.previous_episode_dense_log  # as Foundation: one object after the end
    assert theirs is ref.previous_episode_dense_log
    assert list(ours) == list(theirs)
    assert [kind(r) for r in ours["rewards"]] == [kind(r) for r in theirs["rewards"]]
    assert isinstance(ours["rewards"][0]["a"], list) and len(ours["rewards"][0]["a"]) == 51
    for t in range(T + 1):
        for who in ("0", "50", "p"):
            g, w = ours["states"][t][who], theirs["states"][t][who]
            if t > 0:  # at t = 0 Foundation still shows fields the last episode's steps set
                assert set(g) == set(w), (t, who, set(g) ^ set(w))
            for k in ("Health Index", "Economic Index"):
                assert isinstance(g[k], list) and len(g[k]) == 1, (t, who, k)
                np.testing.assert_allclose(g[k], w[k], rtol=1e-5)
    assert kind(ours["actions"]) == kind(theirs["actions"])


# ---------------------------------------------------------------- actions
def test_single_action_as_one_element_array_or_list():
    """Foundation (numpy < 2) accepts ``np.array([k])`` for a single-action agent, as
    the COVID-19 tutorial passes it; jaxecon accepts it and a 1-element list."""
    require_foundation()
    cfg = default_covid_config()
    cfg["episode_length"] = 2
    env = foundation.make_env_instance(**copy.deepcopy(cfg))
    ref = make_reference_env(cfg)
    results = []
    for form in (lambda k: k, lambda k: np.array([k]), lambda k: [k], lambda k: np.int64(k)):
        env.seed(3)
        env.reset()
        acts = {str(i): form(1 + i % 10) for i in range(51)}
        acts["p"] = form(2)
        obs, rew, *_ = env.step(acts)
        results.append((obs["a"]["world-agent_state"], rew["a"]))
    for r in results[1:]:
        np.testing.assert_array_equal(r[0], results[0][0])
        np.testing.assert_array_equal(r[1], results[0][1])
    ref.reset()
    ref_obs, ref_rew, *_ = ref.step({**{str(i): 1 + i % 10 for i in range(51)}, "p": 2})
    np.testing.assert_allclose(results[0][0], ref_obs["a"]["world-agent_state"], rtol=1e-5)
    with pytest.raises(ValueError, match="single-action mode"):
        env.step({"0": np.array([1, 2])})
