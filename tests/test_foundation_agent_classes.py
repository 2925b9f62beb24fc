"""Agent classes, no planner and several planners through the Foundation shim (issue 40).

- docs/foundation_agent_classes.md runs as written (its python blocks, in
  order, in one namespace), and the economy it builds carries every agent
  with its class: ``type(env.get_agent("3")).__name__ == "Merchant"``, each
  agent its class's actions, observations and masks, Foundation's idx in
  rewards, info, dense logs and metrics;
- ``n_planners=0`` has no ``"p"``; ``planner_groups`` gives ``"p"``, ``"p1"``;
- bad declarations are refused in one line, with no exception chained.
"""

from __future__ import annotations

import pathlib
import re

import matplotlib
import numpy as np
import pytest

from jaxecon import foundation
from jaxecon.core.agent_kinds import PerKind
from jaxecon.core.component import Component
from jaxecon.foundation.agents.mobiles import BasicMobileAgent

DOC = pathlib.Path(__file__).resolve().parents[1] / "docs" / "foundation_agent_classes.md"
SMALL = dict(n_agents=3, world_size=[8, 8], episode_length=4)


def _blocks() -> list:
    return re.findall(r"^```python\n(.*?)^```", DOC.read_text(), re.M | re.S)


def test_the_worked_page_runs_and_every_agent_carries_its_class(tmp_path, monkeypatch):
    matplotlib.use("Agg")
    monkeypatch.chdir(tmp_path)
    ns = {}
    blocks = _blocks()
    assert len(blocks) == 6
    for block in blocks:
        exec(compile(block, str(DOC), "exec"), ns)
    env, obs, rew, info = ns["env"], ns["obs"], ns["rew"], ns["info"]

    assert [type(env.get_agent(k)).__name__ for k in ("0", "1", "2", "3", "p")] == [
        "BasicMobileAgent", "BasicMobileAgent", "BasicMobileAgent", "Merchant", "BasicPlanner"]
    assert [type(a).__name__ for a in env.world.agents] == ["BasicMobileAgent"] * 3 + ["Merchant"]
    merchant, gatherer = env.get_agent(3), env.get_agent(0)
    assert isinstance(merchant, ns["Merchant"]) and merchant.idx == 3
    assert merchant.action_spaces == 2 and gatherer.action_spaces == 5
    assert list(merchant.action) == ["WoodStall"] and list(gatherer.action) == ["Gather"]
    assert merchant.single_action_map == {1: ["WoodStall", 1]}
    with pytest.raises(ValueError, match=r"allowed: 0..1"):
        env.step({"3": 2})  # a gatherer's move is not a merchant's action

    assert list(obs) == list(rew) == list(info) == ["0", "1", "2", "3", "p"]
    assert obs["3"]["action_mask"].shape == (2,) and obs["0"]["action_mask"].shape == (5,)
    assert obs["3"]["flat"].shape != obs["0"]["flat"].shape  # a merchant does not observe Gather
    assert [k for k in obs["p"] if re.fullmatch(r"p\d", k)] == ["p0", "p1", "p2", "p3"]

    log = env.previous_episode_dense_log
    sold = [step["3"] for step in log["actions"] if step["3"]]
    assert len(sold) >= 10 and all(s == {"WoodStall": 1} for s in sold) and merchant.inventory["Coin"] > 0
    assert {tuple(s["3"]["loc"]) for s in log["states"]} == {tuple(merchant.loc)}  # takes no Gather move
    assert all(set(step) <= {"Gather"} for s in log["actions"] for k, step in s.items() if k in "012")
    assert list(log["states"][0]) == ["0", "1", "2", "3", "p"] and list(log["rewards"][0]) == list(rew)
    assert {"endow/3/Coin", "util/3", "endogenous/3/Labor", "util/p"} <= set(env.metrics)
    assert (tmp_path / "merchant_town_coin.png").stat().st_size > 0


def test_no_planner_has_no_p_and_several_planners_are_p_and_p1():
    env = foundation.make_env_instance("uniform/simple_wood_and_stone", components=[("Gather", {})],
                                       n_planners=0, **SMALL)
    obs = env.reset()
    obs, rew, done, info = env.step({str(a.idx): a.get_random_action() for a in env.all_agents})
    assert list(obs) == list(rew) == list(info) == ["0", "1", "2"]
    assert env.num_agents == 3 and env.world.planner is None
    with pytest.raises(ValueError, match=r"No agent with associated index 'p'"):
        env.get_agent("p")

    env = foundation.make_env_instance(
        "uniform/simple_wood_and_stone", components=[("Gather", {}), ("PeriodicBracketTax", {"period": 2})],
        planner_groups=[{"name": "taxman", "components": ["PeriodicBracketTax"]},
                        {"name": "watcher", "components": []}], dense_log_frequency=1, **SMALL)
    obs = env.reset()
    taxman, watcher = env.get_agent("p"), env.get_agent("p1")
    assert [a.idx for a in env.all_agents] == [0, 1, 2, "p", "p1"] and env.num_agents == 5
    assert len(taxman.action_spaces) == 7 and watcher.action_spaces.tolist() == [1]
    brackets = [1, 2, 3, 4, 5, 6, 7]
    for t in range(SMALL["episode_length"]):
        obs, rew, done, info = env.step({"p": brackets, "p1": [0]})
    assert list(obs) == list(rew) == ["0", "1", "2", "p", "p1"]
    assert rew["p"] == rew["p1"] and "p0" in obs["p1"]
    assert taxman.state == watcher.state  # the planners share the planner's state
    log = env.previous_episode_dense_log
    assert log["actions"][0]["p1"] == {} and sorted(log["actions"][0]["p"].values()) == brackets


@foundation.agents.add
class ShimTrader(BasicMobileAgent):
    name = "ShimTrader"


@foundation.agents.add
class ShimBroker(ShimTrader):
    name = "ShimBroker"


@foundation.components.add
class ShimStall(Component):
    """Acts on ShimTrader only (no dynamics: declarations are all these tests need)."""

    name = "ShimStall"
    agent_subclasses = ("ShimTrader",)

    def get_n_actions(self, agent_cls_name):
        return 1 if agent_cls_name == "ShimTrader" else None

    def masks(self, state, params):
        return PerKind(mobile={self.name: np.ones((self.n_agents, 1), bool)})


def _listing(*classes):
    base = foundation.scenarios.get("uniform/simple_wood_and_stone")
    return type("Listing", (base,), {"name": "listing_" + "_".join(classes),
                                     "agent_subclasses": ["BasicMobileAgent", *classes, "BasicPlanner"]})


@pytest.mark.parametrize("scenario, kwargs, message", [
    (("NoSuchClass",), {}, r"names 'NoSuchClass', which is not a registered agent class"),
    (("ShimTrader", "ShimBroker"), {}, r"'ShimBroker' subclasses 'ShimTrader'"),
    ((), {"components": [("Gather", {}), ("ShimStall", {})]},
     r"component 'ShimStall' acts on the agent classes \['ShimTrader'\], which scenario .* does not list"),
    (("ShimTrader",), {"n_agents_per_class": {"BasicMobileAgent": 2, "ShimTrader": 2}},
     r"sum to 4, but n_agents is 3"),
    (("ShimTrader",), {}, r"give each its count with n_agents_per_class"),
    (("ShimTrader",), {"n_agents_per_class": {"BasicMobileAgent": 2, "ShimTrader": 1},
                       "collate_agent_step_and_reset_data": True},
     r"collate_agent_step_and_reset_data=True needs one mobile agent class"),
])
def test_bad_declarations_are_refused_in_one_line(scenario, kwargs, message):
    cls = _listing(*scenario)
    kw = {"components": [("Gather", {}), ("ShimStall", {})], **SMALL, **kwargs}
    with pytest.raises(ValueError, match=message) as err:
        cls(**kw)
    assert "\n" not in str(err.value)
    assert err.value.__cause__ is None and err.value.__context__ is None
