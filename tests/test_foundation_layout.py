"""Foundation's module layout under ``jaxecon.foundation``.

Every module path of ai-economist 1.7.1's ``foundation`` package that user
code imports from exists under ``jaxecon.foundation`` and exports the names
Foundation defines there; the package attributes ``scenarios``,
``components``, ``agents`` (and the entity registries) are registries, as in
Foundation, while ``from ...scenarios.covid19.covid19_env import ...`` works.
The name lists are read from the installed reference, and the helpers that
compute something (rewards, social metrics, tax annealing, dense-log files)
are compared with Foundation's on the same inputs.
"""

from __future__ import annotations

import copy
import importlib
import inspect
import os

import numpy as np
import pytest

import jaxecon
from jaxecon import foundation
from jaxecon.core import registry
from jaxecon.foundation.base.base_env import ScenarioRegistry

from parity import builtin_names
from reference import GATHER_BUILD_CONFIG, make_reference_env, require_foundation

pytestmark = pytest.mark.reference

#: Foundation's module paths (relative to ``foundation``) that jaxecon mirrors here.
#: ``base.base_env`` and ``base.base_component`` (BaseEnvironment, BaseComponent)
#: come with the user-component engine; ``env_wrapper`` is tested in
#: test_foundation_wrappers.py (it needs gym).
MODULES = [
    "base.base_agent", "base.world", "base.registrar",
    "entities", "entities.resources", "entities.landmarks", "entities.endogenous",
    "agents", "agents.mobiles", "agents.planners",
    "scenarios", "scenarios.covid19", "scenarios.covid19.covid19_env",
    "scenarios.one_step_economy", "scenarios.one_step_economy.one_step_economy",
    "scenarios.simple_wood_and_stone", "scenarios.simple_wood_and_stone.layout_from_file",
    "scenarios.simple_wood_and_stone.dynamic_layout",
    "scenarios.utils", "scenarios.utils.rewards", "scenarios.utils.social_metrics",
    "components", "components.build", "components.continuous_double_auction", "components.move",
    "components.redistribution", "components.simple_labor", "components.covid19_components",
    "components.utils", "utils",
]

#: Names Foundation defines in a module that jaxecon leaves out, and why.
NOT_MIRRORED = {
    # Foundation's landmarks.py makes one SourceBlock class per collectible resource in a
    # loop; the module-level name is whichever came last. jaxecon names them.
    "entities.landmarks": {"SourceBlock"},
}


def _own_names(module) -> set:
    """Public classes/functions a module defines itself (not imported ones)."""
    return {
        k for k, v in vars(module).items()
        if not k.startswith("_") and (inspect.isclass(v) or inspect.isfunction(v))
        and getattr(v, "__module__", None) == module.__name__
    }


@pytest.fixture(scope="module")
def ref():
    return require_foundation()


@pytest.mark.parametrize("path", MODULES)
def test_module_exists_and_exports_foundations_names(ref, path):
    ref_mod = importlib.import_module(f"ai_economist.foundation.{path}")
    ours = importlib.import_module(f"jaxecon.foundation.{path}")
    want = _own_names(ref_mod) - NOT_MIRRORED.get(path, set())
    missing = sorted(n for n in want if not hasattr(ours, n))
    assert not missing, f"jaxecon.foundation.{path} lacks {missing}"
    # Submodules a Foundation package imports are attributes of ours too.
    subs = {k for k, v in vars(ref_mod).items()
            if inspect.ismodule(v) and v.__name__.startswith(ref_mod.__name__ + ".")}
    assert all(inspect.ismodule(getattr(ours, s, None)) for s in subs), sorted(subs)


def test_package_attributes_are_registries_as_in_foundation(ref):
    for name in ("scenarios", "components", "agents", "resources", "landmarks", "endogenous"):
        assert type(getattr(ref, name)).__name__ == "Registry"
        # scenarios: the shim's registry of shim scenario classes (base.base_env)
        expected = ScenarioRegistry if name == "scenarios" else registry.Registry
        assert isinstance(getattr(foundation, name), expected), name
    assert inspect.ismodule(foundation.utils) and inspect.ismodule(ref.utils)
    assert inspect.ismodule(foundation.entities) and inspect.ismodule(ref.entities)
    import jaxecon.foundation.scenarios as s  # as in Foundation, the registry
    assert s is foundation.scenarios
    from jaxecon.foundation.scenarios import scenario_registry
    from jaxecon.foundation.components import component_registry
    from jaxecon.foundation.entities.resources import resource_registry
    assert scenario_registry is foundation.scenarios and component_registry is foundation.components
    assert resource_registry is foundation.resources
    assert foundation.scenarios.has("CovidAndEconomySimulation")
    assert foundation.scenarios.get("covidandeconomysimulation").name == "CovidAndEconomySimulation"
    assert (builtin_names(foundation.scenarios, jaxecon.scenario_registry)
            == builtin_names(ref.scenarios, package="ai_economist."))
    # shipped classes only: other tests register test-only agent classes
    assert builtin_names(foundation.agents) == builtin_names(ref.agents, package="ai_economist.")


def test_entity_and_agent_classes(ref):
    from jaxecon.foundation.entities.endogenous import Endogenous, Labor
    from jaxecon.foundation.entities.landmarks import House, Landmark
    from jaxecon.foundation.entities.resources import Resource, Wood
    from jaxecon.foundation.agents.mobiles import BasicMobileAgent
    from jaxecon.foundation.agents.planners import BasicPlanner
    from jaxecon.foundation.base.base_agent import BaseAgent

    assert issubclass(Wood, Resource) and issubclass(House, Landmark) and issubclass(Labor, Endogenous)
    assert foundation.endogenous.get("Labor") is Labor
    assert issubclass(BasicMobileAgent, BaseAgent) and issubclass(BasicPlanner, BaseAgent)
    assert issubclass(BasicMobileAgent, foundation.agents.get("BasicMobileAgent"))
    for name in ("Wood", "Stone", "Coin"):
        ours, theirs = foundation.resources.get(name), ref.resources.get(name)
        assert ours.collectible == theirs.collectible
        np.testing.assert_allclose(ours.color, theirs.color)


@pytest.mark.parametrize("module, cls, name", [
    ("scenarios.covid19.covid19_env", "CovidAndEconomyEnvironment", "CovidAndEconomySimulation"),
    ("scenarios.simple_wood_and_stone.layout_from_file", "LayoutFromFile", "layout_from_file/simple_wood_and_stone"),
    ("scenarios.simple_wood_and_stone.layout_from_file", "SplitLayout", "split_layout/simple_wood_and_stone"),
    ("scenarios.simple_wood_and_stone.dynamic_layout", "Uniform", "uniform/simple_wood_and_stone"),
    ("scenarios.simple_wood_and_stone.dynamic_layout", "MultiZone", "multi_zone/simple_wood_and_stone"),
    ("scenarios.simple_wood_and_stone.dynamic_layout", "Quadrant", "quadrant/simple_wood_and_stone"),
    ("scenarios.one_step_economy.one_step_economy", "OneStepEconomy", "one-step-economy"),
])
def test_scenario_classes_have_foundations_names(ref, module, cls, name):
    ours = getattr(importlib.import_module(f"jaxecon.foundation.{module}"), cls)
    theirs = getattr(importlib.import_module(f"ai_economist.foundation.{module}"), cls)
    assert ours.name == theirs.name == name
    assert issubclass(ours, foundation.FoundationEnv)


def test_scenario_class_builds_the_environment():
    """The WarpDrive tutorial's way: ``CovidAndEconomyEnvironment(**config)``."""
    from jaxecon.foundation.scenarios.covid19.covid19_env import CovidAndEconomyEnvironment
    from jaxecon.scenarios.covid19.config import default_covid_config

    cfg = default_covid_config()
    cfg.pop("scenario_name")
    cfg["episode_length"] = 3
    env = CovidAndEconomyEnvironment(**cfg)
    assert isinstance(env, CovidAndEconomyEnvironment) and env.name == "CovidAndEconomySimulation"
    obs = env.reset()
    assert list(obs) == ["a", "p"]


def test_rewards_and_social_metrics_match_foundation(ref):
    from jaxecon.foundation.scenarios.utils import rewards, social_metrics

    ref_rewards = importlib.import_module("ai_economist.foundation.scenarios.utils.rewards")
    ref_social = importlib.import_module("ai_economist.foundation.scenarios.utils.social_metrics")
    rng = np.random.default_rng(0)
    coin = rng.uniform(0, 100, 6)
    labor = rng.uniform(0, 50, 6)
    cases = [
        ("isoelastic_coin_minus_labor", (coin, labor, 0.23, 0.21)),
        ("coin_minus_labor_cost", (coin, labor, 2.0, 0.1)),
        ("coin_eq_times_productivity", (coin, 1.0)),
        ("inv_income_weighted_coin_endowments", (coin,)),
        ("inv_income_weighted_utility", (coin, labor)),
    ]
    for name, args in cases:
        np.testing.assert_allclose(getattr(rewards, name)(*args), getattr(ref_rewards, name)(*args), rtol=1e-5)
    for name in ("get_gini", "get_equality", "get_productivity"):
        np.testing.assert_allclose(getattr(social_metrics, name)(coin), getattr(ref_social, name)(coin), rtol=1e-5)


def test_tax_annealing_helpers_match_foundation(ref):
    from jaxecon.foundation.components import utils

    ref_utils = importlib.import_module("ai_economist.foundation.components.utils")
    values = [-0.5, 0.0, 0.1, 0.25, 0.5, 0.75, 1.0]
    for completions in (0, 50, 100, 120, 150, 200, 1000):
        for warmup, slope in ((100, 0.01), (-10, 0.05)):
            np.testing.assert_allclose(
                utils.annealed_tax_limit(completions, warmup, slope),
                ref_utils.annealed_tax_limit(completions, warmup, slope))
            np.testing.assert_array_equal(
                utils.annealed_tax_mask(completions, warmup, slope, values),
                ref_utils.annealed_tax_mask(completions, warmup, slope, values))


def test_episode_log_files_are_interchangeable(ref, tmp_path):
    """A dense log saved by jaxecon loads with Foundation's ``load_episode_log``, and
    one saved by Foundation loads with jaxecon's."""
    cfg = copy.deepcopy(GATHER_BUILD_CONFIG)
    cfg["episode_length"] = 3
    env = foundation.make_env_instance(**copy.deepcopy(cfg))
    ref_env = make_reference_env(cfg)
    for e in (env, ref_env):
        e.reset(force_dense_logging=True)
        for _ in range(3):
            e.step({})
    ours, theirs = os.fspath(tmp_path / "env000.lz4"), os.fspath(tmp_path / "ref000.lz4")
    foundation.utils.save_episode_log(env, ours)
    ref.utils.save_episode_log(ref_env, theirs, compression_level=3)
    log = foundation.utils.load_episode_log(ours)
    assert log == env.previous_episode_dense_log
    assert ref.utils.load_episode_log(ours) == log
    assert foundation.utils.load_episode_log(theirs) == ref.utils.load_episode_log(theirs)
    assert list(foundation.utils.load_episode_log(theirs)) == list(log)
    with pytest.raises(TypeError):
        foundation.utils.save_episode_log(object(), ours)
