"""Metrics are per group: a planner's scenario metrics are keyed by its group.

With Foundation's groups (``"a"``, the planner ``"p"``) the keys are
Foundation's (``endow/p/Coin``, ``util/p``; the parity tests hold them against
the reference); an economy without a planner (``n_planners=0``) reports no
planner key, in every scenario that has planner metrics. Several planners:
``tests/test_planner_groups.py``.

The functions run jitted: op by op, JAX compiles each primitive apart.
"""

from __future__ import annotations

import jax
import pytest

import jaxecon
from jaxecon.scenarios.covid19 import default_covid_config
from jaxecon.wrappers import LogWrapper

SWS = dict(components=[("Build", {}), ("Gather", {})], n_agents=3, world_size=[10, 10], episode_length=4)
ONE_STEP = dict(components=[("SimpleLabor", {}), ("PeriodicBracketTax", {"period": 2, "disable_taxes": True})],
                n_agents=3, world_size=[1, 1], episode_length=2)


def metric_keys(env) -> list:
    params = env.default_params
    _, state = jax.jit(env.reset)(jax.random.key(0), params)
    return list(env.metrics(state, params))  # eagerly: a jitted dict comes back with its keys sorted


def planner_keys(keys, group="p") -> list:
    return [k for k in keys if f"/{group}/" in k or k.endswith(f"/{group}")]


@pytest.mark.parametrize("name, kw", [("uniform/simple_wood_and_stone", SWS), ("one-step-economy", ONE_STEP)])
def test_no_planner_no_planner_metric(name, kw):
    none, default = jaxecon.make(name, n_planners=0, **kw), jaxecon.make(name, **kw)
    keys, with_planner = metric_keys(none), metric_keys(default)
    assert planner_keys(keys) == []
    # the rest is the default economy's, in its order
    assert keys == [k for k in with_planner if k not in planner_keys(with_planner)]
    assert none.scenario.planner_group_names == ()
    # the episode log wrapper, which reads the scenario's keys, builds and steps
    log = LogWrapper(none)
    assert planner_keys(log.metric_names) == []
    obs, s = jax.jit(log.reset)(jax.random.key(1), log.default_params)
    acts = jax.jit(none.sample_actions)(jax.random.key(2), obs)
    *_, info = jax.jit(log.step)(jax.random.key(3), s, acts, log.default_params)
    assert set(info["episode_metrics"]) == set(log.metric_names)


def test_foundation_groups_keep_foundations_planner_keys():
    default = jaxecon.make("uniform/simple_wood_and_stone", **SWS)
    keys = metric_keys(default)
    assert default.scenario.planner_group_names == ("p",)
    assert planner_keys(keys) == ["endow/p/Coin", "endow/p/Stone", "endow/p/Wood", "util/p"]
    # Foundation's order: the mobile agents' util, then the planner's endowments and util, then labor
    i = keys.index("util/2")
    assert keys[i + 1:i + 6] == ["endow/p/Coin", "endow/p/Stone", "endow/p/Wood", "util/p", "labor/weighted_cost"]
    assert planner_keys(metric_keys(jaxecon.make("one-step-economy", **ONE_STEP))) == ["endow/p/Coin", "util/p"]


def test_covid19_without_a_planner_has_no_planner_index():
    cfg = default_covid_config()
    name = cfg.pop("scenario_name")
    cfg = {**cfg, "episode_length": 4}
    planner_only = ["usa/health_index_at_end_of_episode", "usa/economic_index_at_end_of_episode"]
    # without FederalGovernmentSubsidy, the one component with planner actions
    comps = [c for c in cfg["components"] if "FederalGovernmentSubsidy" not in c]
    none = metric_keys(jaxecon.make(name, **{**cfg, "components": comps, "n_planners": 0}))
    default = metric_keys(jaxecon.make(name, **{**cfg, "components": comps}))
    assert default[-2:] == planner_only
    assert none == default[:-2]
