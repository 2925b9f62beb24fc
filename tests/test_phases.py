"""The published reset/step sequence (``jaxecon.core.phases``) and the explicit build.

- ``reset_phases`` / ``step_phases`` list Foundation's order
  (``base_env.reset`` / ``step``) with one key per drawing phase, all distinct;
- running the phases one by one with ``run_reset_phase`` / ``run_step_phase``
  gives exactly ``env.reset`` / ``env.step``'s state;
- a scenario class called directly has no components until an ``Economy``
  is built on it (``jaxecon.make`` builds one), with clear errors; the economy
  reads the scenario's configuration through, but not its hooks.
"""

from __future__ import annotations

import jax
import numpy as np
import pytest

import jaxecon
from jaxecon.core import phases
from jaxecon.core.env import Economy
from jaxecon.core.registry import scenario_registry

CONFIG = {
    "scenario_name": "uniform/simple_wood_and_stone",
    "components": [{"Build": {}}, {"Gather": {}}],
    "n_agents": 3, "world_size": [8, 8], "episode_length": 5,
}


@pytest.fixture(scope="module")
def env():
    return jaxecon.make_from_config(CONFIG)


def test_phase_lists_follow_foundation_and_draw_distinct_keys(env):
    reset = [(p.name, p.component_name) for p in env.reset_phases]
    assert reset == [("init_state", None), ("reset_starting_layout", None), ("reset_agent_states", None),
                     ("component_reset", "Build"), ("component_reset", "Gather"),
                     ("additional_reset_steps", None), ("carry_over", None), ("generate_observations", None)]
    step = [(p.name, p.component_name) for p in env.step_phases]
    assert step == [("advance_timestep", None), ("component_step", "Build"), ("component_step", "Gather"),
                    ("scenario_step", None), ("generate_observations", None), ("compute_reward", None),
                    ("count_completion", None), ("step_info", None)]
    for seq, split in ((env.reset_phases, phases.reset_keys), (env.step_phases, phases.step_keys)):
        used = [p.key for p in seq if p.key is not None]
        assert len(set(used)) == len(used)
        keys = split(jax.random.key(0), len(env.components))
        data = {tuple(np.asarray(jax.random.key_data(keys[k])).ravel()) for k in used}
        assert len(data) == len(used)  # every phase draws its own key


def test_running_the_phases_one_by_one_is_reset_and_step(env):
    params, key = env.default_params, jax.random.key(3)
    want = env.reset(key, params)
    keys = phases.reset_keys(key, len(env.components))
    state, out = None, {}
    for p in env.reset_phases:
        state, produced = env.run_reset_phase(p, keys, state, params)
        assert set(produced) <= {phases.OUTPUTS.get(p.name)}
        out.update(produced)
    jax.tree.map(np.testing.assert_array_equal, (out["obs"], state), want)

    acts = {"a": np.array([1, 2, 3], np.int32)}
    state = state.replace(timestep=state.timestep + env.episode_length - 1)  # the step ends the episode
    want = env.step(key, state, acts, params)
    local = env.codec.component_actions(env.codec.check_actions(acts))
    keys = phases.step_keys(key, len(env.components))
    out = {}
    for p in env.step_phases:
        state, produced = env.run_step_phase(p, keys, state, params, local)
        assert set(produced) <= {phases.OUTPUTS.get(p.name)}
        out.update(produced)
    assert bool(out["done"]) and int(state.completions) == 1
    jax.tree.map(np.testing.assert_array_equal,
                 (out["obs"], state, out["reward"], out["done"], out["info"]), want)


def test_a_scenario_class_called_directly_is_built_explicitly():
    cls = scenario_registry.get(CONFIG["scenario_name"])
    kwargs = {k: v for k, v in CONFIG.items() if k != "scenario_name"}
    scenario = cls(**kwargs)
    with pytest.raises(RuntimeError, match="jaxecon.make"):
        scenario.components
    env = Economy(scenario)
    assert env.scenario is scenario and [c.name for c in env.components] == ["Build", "Gather"]
    assert scenario.components == env.components
    with pytest.raises(RuntimeError, match="already belongs to an economy"):
        Economy(scenario)
    with pytest.raises(TypeError, match="scenario must be a jaxecon.core.scenario.Scenario"):
        Economy(kwargs)


def test_the_economy_reads_the_scenarios_configuration_but_not_its_hooks():
    env = jaxecon.make(**CONFIG)
    assert (env.n_agents, env.world_size) == (3, (8, 8)) and env.name in CONFIG["scenario_name"]
    assert env.energy_cost == env.scenario.energy_cost
    with pytest.raises(AttributeError, match=r"env.scenario.compute_reward"):
        env.compute_reward
    with pytest.raises(AttributeError, match="no attribute 'no_such_thing'"):
        env.no_such_thing
    assert "energy_cost" in dir(env) and "compute_reward" not in dir(env)


def test_the_scenario_registry_takes_only_jaxecon_scenarios():
    class NumpyScenario:  # e.g. a Foundation-style scenario
        name = "numpy_scenario"

    with pytest.raises(TypeError, match="not a jaxecon scenario.*jaxecon.foundation.scenarios.add"):
        scenario_registry.add(NumpyScenario)
    assert not scenario_registry.has("numpy_scenario")
