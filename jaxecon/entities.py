"""Entities of the world: resources, landmarks, endogenous quantities, agents.

Mirrors ``ai_economist/foundation/entities/{resources,landmarks,endogenous}.py``
and ``agents/{mobiles,planners}.py``. In jaxecon these classes carry only
static metadata (names, flags, RGB colours in [0, 1] as in Foundation); all quantities live in ``EnvState``.

Resources: ``Coin`` (not collectible), ``Stone`` and ``Wood`` (collectible;
each implies a ``<R>SourceBlock`` landmark where it regenerates).
Landmarks: ``House`` (ownable and solid: "private"; only its owner may stand on
it), ``Water`` (solid, not ownable: "blocking"), ``WoodSourceBlock``,
``StoneSourceBlock`` (not solid: "public").
Endogenous: ``Labor`` (accumulated labor, in labor units).
Agents: ``BasicMobileAgent`` (idx 0..n-1) and ``BasicPlanner`` (idx "p").
"""

from __future__ import annotations

import numpy as np

from jaxecon.core.registry import (
    agent_registry,
    endogenous_registry,
    landmark_registry,
    resource_registry,
)


class Resource:
    """Base of resources. ``collectible`` resources appear on the map and get a source block."""

    name = ""
    color = np.array([0, 0, 0]) / 255.0
    collectible = False


@resource_registry.add
class Wood(Resource):
    """Wood: collectible, gathered from WoodSourceBlock tiles."""

    name = "Wood"
    color = np.array([107, 143, 113]) / 255.0
    collectible = True


@resource_registry.add
class Stone(Resource):
    """Stone: collectible, gathered from StoneSourceBlock tiles."""

    name = "Stone"
    color = np.array([241, 233, 219]) / 255.0
    collectible = True


@resource_registry.add
class Coin(Resource):
    """Coin: the currency. Every environment has it; not collectible."""

    name = "Coin"
    color = np.array([229, 211, 82]) / 255.0
    collectible = False


class Landmark:
    """Base of landmarks. ``ownable and solid`` = private, ``solid`` = blocking, else public."""

    name = ""
    color = np.array([0, 0, 0]) / 255.0
    ownable = False
    solid = True

    @classmethod
    def is_private(cls) -> bool:
        return cls.ownable and cls.solid

    @classmethod
    def is_blocking(cls) -> bool:
        return cls.solid and not cls.ownable

    @classmethod
    def is_public(cls) -> bool:
        return not cls.solid


@landmark_registry.add
class House(Landmark):
    """House: built by mobile agents; private (only its owner may enter)."""

    name = "House"
    color = np.array([220, 20, 220]) / 255.0
    ownable = True
    solid = True


@landmark_registry.add
class Water(Landmark):
    """Water: blocks movement for everyone."""

    name = "Water"
    color = np.array([50, 50, 250]) / 255.0
    ownable = False
    solid = True


@landmark_registry.add
class WoodSourceBlock(Landmark):
    """Tile where Wood regenerates; public (anyone may stand on it)."""

    name = "WoodSourceBlock"
    color = np.array([107, 143, 113]) / 255.0
    ownable = False
    solid = False


@landmark_registry.add
class StoneSourceBlock(Landmark):
    """Tile where Stone regenerates; public (anyone may stand on it)."""

    name = "StoneSourceBlock"
    color = np.array([241, 233, 219]) / 255.0
    ownable = False
    solid = False


class Endogenous:
    """Base of endogenous quantities (Foundation's ``entities/endogenous.py``)."""

    name = ""


@endogenous_registry.add
class Labor(Endogenous):
    """Labor: the accumulated effort of a mobile agent (labor units)."""

    name = "Labor"


@agent_registry.add
class BasicMobileAgent:
    """A mobile agent: has a location, inventory, escrow and endogenous Labor."""

    name = "BasicMobileAgent"


@agent_registry.add
class BasicPlanner:
    """The social planner (idx ``"p"``): inventory and escrow, no location, no endogenous."""

    name = "BasicPlanner"


#: Resources and endogenous quantities every environment has (Foundation's BaseEnvironment).
ALWAYS_PRESENT = ("Coin", "Labor")
