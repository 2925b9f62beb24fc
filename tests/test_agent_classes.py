"""Several mobile agent classes in the functional API (Foundation's ``agent_subclasses``).

A user registers ``Trader(BasicMobileAgent)``, lists it in a scenario's
``agent_subclasses`` beside ``BasicMobileAgent`` and ``BasicPlanner``, and
gives each class its count with ``n_agents_per_class``:

- each class is a group named after it, acted on by the components that
  list it (actions, masks, observations), agents numbered in class order;
- a step with a trader's sale changes the trader's coin and wood only;
- bad declarations get one-line errors naming the class, the component or
  the count.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from flax import struct

import jaxecon
from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core.component import Component
from jaxecon.core.groups import MOBILE, PLANNER
from jaxecon.core.registry import agent_registry, component_registry, scenario_registry
from jaxecon.core.state import float_dtype
from jaxecon.entities import BasicMobileAgent
from jaxecon.scenarios.simple_wood_and_stone.dynamic_layout import Uniform


@agent_registry.add
class ClassesTrader(BasicMobileAgent):
    name = "ClassesTrader"


@agent_registry.add
class ClassesBroker(ClassesTrader):
    name = "ClassesBroker"


@scenario_registry.add
class ClassesMarketTown(Uniform):
    name = "classes/market_town"
    agent_subclasses = (MOBILE, "ClassesTrader", PLANNER)


@scenario_registry.add
class ClassesBadListing(Uniform):
    name = "classes/bad_listing"
    agent_subclasses = (MOBILE, "ClassesTrader", "ClassesBroker", PLANNER)


@scenario_registry.add
class ClassesUnregistered(Uniform):
    name = "classes/unregistered"
    agent_subclasses = (MOBILE, "NoSuchAgent", PLANNER)


@struct.dataclass
class _Sold:
    wood: jax.Array


@component_registry.add
class ClassesWoodSale(Component):
    """A trader sells one Wood for 5 Coin (action 1) when it holds one."""

    name = "ClassesWoodSale"
    agent_subclasses = ("ClassesTrader",)
    required_entities = ("Wood", "Coin")

    def get_n_actions(self, agent_cls_name):
        return 1 if agent_cls_name == "ClassesTrader" else None

    def init(self, key, params):
        return _Sold(wood=jnp.zeros(self.n_agents, float_dtype()))

    def step(self, key, state, actions, params):
        sell = ((actions.mobile[self.name] == 1) & (state.inventory["Wood"] >= 1)).astype(float_dtype())
        inv = {**state.inventory, "Wood": state.inventory["Wood"] - sell, "Coin": state.inventory["Coin"] + 5 * sell}
        sold = _Sold(wood=state.components[self.name].wood + sell)
        return state.replace(inventory=inv, components={**state.components, self.name: sold})

    def observe(self, state, params):
        return Observed(mobile={"sold": state.components[self.name].wood})

    def masks(self, state, params):
        return PerKind(mobile={self.name: (state.inventory["Wood"] >= 1)[:, None]})


COMPONENTS = [("Gather", {}), ("ClassesWoodSale", {}), ("PeriodicBracketTax", {"period": 5})]


def _make(scenario="classes/market_town", components=COMPONENTS, **kw):
    kw = {"n_agents": 4, "world_size": [8, 8], "episode_length": 10,
          "n_agents_per_class": {MOBILE: 2, "ClassesTrader": 2}, **kw}
    return jaxecon.make(scenario, components=components, **kw)


def test_each_class_is_a_group_acted_on_by_the_components_that_list_it():
    env = _make()
    assert env.group_names == (MOBILE, "ClassesTrader", "p")
    gatherers, traders, _ = env.agent_groups
    assert (gatherers.start, gatherers.count, traders.start, traders.count) == (0, 2, 2, 2)
    assert traders.agent_class == "ClassesTrader" and gatherers.agent_class == MOBILE
    assert env.group_actions[MOBILE].names == ("Gather",)
    assert env.group_actions["ClassesTrader"].names == ("ClassesWoodSale",)
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    trader_fields = env.observation_space("ClassesTrader")["flat"].shape
    assert obs["ClassesTrader"]["flat"].shape == (2,) + trader_fields
    assert obs[MOBILE]["flat"].shape[-1] != obs["ClassesTrader"]["flat"].shape[-1]  # Gather's vs the sale's

    state = state.replace(inventory={**state.inventory, "Wood": jnp.ones(4, float_dtype())})
    coin = np.asarray(state.inventory["Coin"])
    actions = {MOBILE: jnp.zeros(2, jnp.int32), "ClassesTrader": jnp.array([1, 0], jnp.int32)}
    _, state, _, _, _ = env.step(jax.random.key(1), state, actions, params)
    np.testing.assert_array_equal(np.asarray(state.inventory["Coin"]) - coin, [0, 0, 5, 0])
    np.testing.assert_array_equal(state.inventory["Wood"], [1, 1, 0, 1])
    joint = env.codec.joint_actions(actions)["a"]  # Foundation's joint layout: Gather, then the sale
    np.testing.assert_array_equal(joint, [0, 0, 5, 0])


def test_bad_declarations_name_the_class_the_component_or_the_count():
    with pytest.raises(ValueError, match=r"'NoSuchAgent', which is not a registered agent class"):
        _make("classes/unregistered", n_agents_per_class=None)
    with pytest.raises(ValueError, match=r"'ClassesBroker' subclasses 'ClassesTrader'"):
        _make("classes/bad_listing", n_agents_per_class=None)
    with pytest.raises(ValueError, match=r"component 'ClassesWoodSale' acts on the agent classes \['ClassesTrader'\]"):
        jaxecon.make("uniform/simple_wood_and_stone", components=COMPONENTS, n_agents=4, world_size=[8, 8])
    with pytest.raises(ValueError, match=r"sum to 5, but n_agents is 4"):
        _make(n_agents_per_class={MOBILE: 2, "ClassesTrader": 3})
    with pytest.raises(ValueError, match=r"names \['ClassesBroker'\], which are not mobile agent classes"):
        _make(n_agents_per_class={MOBILE: 2, "ClassesBroker": 2})
    with pytest.raises(ValueError, match=r"give each its count with n_agents_per_class"):
        _make(n_agents_per_class=None)
    with pytest.raises(ValueError, match=r"n_agents_per_class\['ClassesTrader'\] must be an int >= 1"):
        _make(n_agents_per_class={MOBILE: 4, "ClassesTrader": 0})
    with pytest.raises(ValueError, match=r"gives no count for \['ClassesTrader'\]: give every mobile agent class"):
        _make(n_agents_per_class={MOBILE: 4})
    with pytest.raises(ValueError, match=r"must be a non-empty dict \{agent class name: count\}, got an empty dict"):
        _make(n_agents_per_class={})
