"""WealthRedistribution: equalise every mobile agent's Coin endowment each step.

Follows ``ai_economist/foundation/components/redistribution.py``
(``WealthRedistribution``).

No kwargs, actions, observations, masks, metrics, dense log or state. Each
step: total = sum of every agent's Coin (inventory + escrow, summed in numpy's
order); each agent's inventory Coin := total / n_agents - its escrow Coin
(negative when its escrow exceeds the equal share). Put it last in the
component list.

Usage::

    env = jaxecon.make("layout_from_file/simple_wood_and_stone", ...,
                       components=[("Build", {}), ("Gather", {}),
                                   ("WealthRedistribution", {})])
"""

from __future__ import annotations

from jaxecon.core.component import Component
from jaxecon.core.env import MOBILE
from jaxecon.core.numerics import numpy_order_sum
from jaxecon.core.registry import component_registry
from jaxecon.core.state import EnvState


@component_registry.add
class WealthRedistribution(Component):
    """Equalise Coin endowments every step (see module docstring).

    No keyword arguments; its sub-state is ``NoState()``. Foundation asserts
    that the total is preserved to within 1 coin; the jaxecon update preserves
    it up to rounding by construction.
    """

    name = "WealthRedistribution"
    component_type = None
    required_entities = ("Coin",)
    agent_subclasses = (MOBILE,)

    def step(self, key, state: EnvState, actions, params):
        escrow = state.escrow["Coin"]
        total = numpy_order_sum(state.inventory["Coin"] + escrow)
        coin = total / self.n_agents - escrow
        return state.replace(inventory={**state.inventory, "Coin": coin})
