"""A scenario class registered in ``jaxecon.scenario_registry`` and nowhere else is found by
``jaxecon run``'s recorders, the shim's scenario attributes and Foundation's class names, from
what the class declares (``run_recorder``, ``foundation_attributes``, ``foundation_class_name``)."""

import numpy as np
import pytest

import jaxecon
from jaxecon import foundation
from jaxecon.cli.recorders import CovidRecorder, GridworldRecorder, recorder_for
from jaxecon.interop.foundation_hooks import FoundationAttribute
from jaxecon.core.registry import scenario_registry
from jaxecon.foundation import scenario_envs
from jaxecon.foundation.base.base_env import scenario_registry as shim_scenario_registry
from jaxecon.scenarios.simple_wood_and_stone import Uniform

NAME = "throwaway/simple_wood_and_stone"
KWARGS = dict(components=[("Gather", {})], n_agents=2, world_size=[6, 6], episode_length=3)


@pytest.fixture
def throwaway(monkeypatch):
    """A ``Uniform`` subclass registered for one test (both registries restored afterwards)."""
    monkeypatch.setattr(scenario_registry, "_lookup", dict(scenario_registry._lookup))
    monkeypatch.setattr(shim_scenario_registry, "_classes", dict(shim_scenario_registry._classes))

    @scenario_registry.add
    class Throwaway(Uniform):
        name = NAME
        run_recorder = "covid19"  # a gridworld recording the COVID way: only the declaration says so
        foundation_class_name = "ThrowawayEnvironment"

        def foundation_attributes(self):
            warmup = FoundationAttribute(
                get=lambda view: int(np.asarray(view.state.scenario.auto_warmup_integrator)),
                set=lambda value: {"auto_warmup_integrator": value},
            )
            return {**super().foundation_attributes(), "warmup_steps": warmup}

    return Throwaway


def test_recorder_is_the_one_the_scenario_class_names(throwaway, monkeypatch):
    assert isinstance(recorder_for(jaxecon.make(NAME, **KWARGS)), CovidRecorder)
    plain = recorder_for(jaxecon.make("uniform/simple_wood_and_stone", **KWARGS), video=False)
    assert isinstance(plain, GridworldRecorder) and not plain.video
    monkeypatch.setattr(throwaway, "run_recorder", "nope")
    with pytest.raises(ValueError, match="run_recorder must be one of .*'gridworld'"):
        recorder_for(jaxecon.make(NAME, **KWARGS))


def test_shim_finds_the_class_and_its_foundation_attributes(throwaway):
    shim_cls = scenario_envs.ThrowawayEnvironment
    assert shim_cls is foundation.scenarios.get(NAME)
    assert scenario_envs.Uniform is foundation.scenarios.get("uniform/simple_wood_and_stone")
    assert "ThrowawayEnvironment" in dir(scenario_envs)
    env = foundation.make_env_instance(NAME, **KWARGS)
    assert isinstance(env, shim_cls)
    assert env.warmup_steps == 0 and "warmup_steps" in dir(env)
    env.warmup_steps = 7
    assert env.warmup_steps == 7 and int(env.state.scenario.auto_warmup_integrator) == 7
    with pytest.raises(ValueError, match="warmup_steps must have shape"):
        env.warmup_steps = [1, 2]
    assert env.energy_weight == 1.0  # the wood-and-stone attributes are inherited
    with pytest.raises(AttributeError, match="no attribute 'NoSuchEnvironment'"):
        scenario_envs.NoSuchEnvironment
