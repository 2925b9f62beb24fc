"""``jaxecon.bench.memory``: memory per env and the bytes a step really moves (the bench's floor).

The floor must count only what a step reads and writes: state elements the
step leaves alone (a map's Water, the COVID-19 stringency history outside
the day's slot) cost nothing. Small economies, a few envs and steps.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxecon
from jaxecon.bench import economy_makers, measure_memory, measure_step_traffic, pytree_bytes


def _env(name):
    env = jaxecon.make_from_config(economy_makers()[name]())
    return env, env.default_params


def _check_sums(mem, traffic):
    """The floor's parts add up: writes = changed state + obs + key, reads = changed state + masks + key."""
    assert traffic["obs_bytes"] == mem["obs_bytes"] and traffic["key_bytes"] == mem["key_bytes"]
    assert traffic["state_changed_bytes"] == pytest.approx(sum(traffic["changed_leaves"].values()))
    assert traffic["written_bytes"] == pytest.approx(
        traffic["state_changed_bytes"] + mem["obs_bytes"] + mem["key_bytes"])
    assert traffic["read_bytes"] == pytest.approx(
        traffic["state_changed_bytes"] + traffic["mask_bytes"] + mem["key_bytes"])
    assert traffic["bytes_per_env_step"] == pytest.approx(traffic["written_bytes"] + traffic["read_bytes"])


def test_memory_per_env_is_state_obs_and_rollout_carry():
    env, params = _env("gather_build")
    mem = measure_memory(env, params)
    obs, state = env.reset(jax.random.key(0), params)
    assert mem["state_bytes"] == sum(x.nbytes for x in jax.tree.leaves(state))
    assert mem["obs_bytes"] == pytree_bytes(obs)
    assert mem["carry_bytes"] == mem["state_bytes"] + mem["obs_bytes"] + mem["key_bytes"]


def test_floor_counts_only_the_state_a_step_changes():
    env, params = _env("gather_build")
    mem = measure_memory(env, params)
    traffic = measure_step_traffic(env, params, n_envs=2, warm_steps=2, probe_steps=3)
    _check_sums(mem, traffic)
    leaves = traffic["changed_leaves"]
    assert leaves[".timestep"] == 4.0  # int32, +1 every step
    assert not any(k.startswith(".maps['Water']") for k in leaves)  # never changes
    # the maps are most of the state; a step changes a few of their tiles
    assert traffic["state_changed_bytes"] < 0.05 * mem["state_bytes"]


@pytest.mark.skipif("covid19" not in economy_makers(), reason="COVID-19 scenario not installed")
def test_floor_counts_one_day_of_the_covid19_stringency_history():
    env, params = _env("covid19")
    mem = measure_memory(env, params)
    traffic = measure_step_traffic(env, params, n_envs=2, warm_steps=2, probe_steps=3)
    _check_sums(mem, traffic)
    _obs, state = jax.eval_shape(env.reset, jax.random.key(0), params)
    hist = state.scenario.stringency_level_history  # [days, n states], a ring buffer
    one_day = int(np.prod(hist.shape[1:])) * np.dtype(hist.dtype).itemsize
    assert 0 < traffic["changed_leaves"][".scenario.stringency_level_history"] <= one_day
    assert traffic["state_changed_bytes"] < 0.25 * mem["state_bytes"]
