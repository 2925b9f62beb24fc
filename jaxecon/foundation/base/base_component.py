"""Foundation's ``base/base_component.py``: ``BaseComponent`` and ``component_registry``.

Follows ``ai_economist/foundation/base/base_component.py`` of ai-economist
1.7.1. A component written against Foundation's API in numpy, with only the
import changed::

    from jaxecon.foundation.base.base_component import BaseComponent, component_registry

    @component_registry.add
    class Lottery(BaseComponent):
        name = "Lottery"
        required_entities = ["Coin"]
        agent_subclasses = ["BasicMobileAgent"]

        def get_n_actions(self, agent_cls_name): ...
        def get_additional_state_fields(self, agent_cls_name): ...
        def component_step(self):
            for agent in self.world.get_random_order_agents():
                if agent.get_component_action(self.name) == 1:
                    agent.state["inventory"]["Coin"] -= 1
        def generate_observations(self): ...
        def generate_masks(self, completions=0): ...

runs in the shim with Foundation's semantics, in component-list order among
jaxecon's jitted components: its hooks run on the host between the jitted
pieces (``jaxecon.foundation.host_engine``), against writable views of the
state (``self.world``, its ``maps`` and ``agents``, their ``state``,
``inventory``, ``escrow``, ``endogenous``), and its writes land in the
``EnvState``. Its observations, masks, metrics and dense log appear where
Foundation puts them. That costs a trip to the host per hook; a component
meant for speed (and for the functional API, ``jax.jit``, ``vmap``) is a
``jaxecon.core.component.Component`` instead: docs/foundation_shim.md shows
the port of one.

``component_registry`` is jaxecon's one component registry (``foundation.
components``): it holds jaxecon's components and Foundation-style ones.
Every class it holds is a subclass of ``BaseComponent`` (jaxecon components
through ``__subclasshook__``), as every class of Foundation's registry is.

What differs from Foundation: ``world`` is the shim's ``World`` view
(while the object is being built, inside ``__init__``, a stand-in that has
only ``n_agents``, ``world_size``, ``resources``, ``landmarks`` and the
action modes); numeric ``get_additional_state_fields`` values are stored as
floats in the ``EnvState`` (read back as ints for int fields while whole,
bools for bool fields), other values stay on the host.
"""

from __future__ import annotations

import abc

import numpy as np

from jaxecon.core.component import Component
from jaxecon.core.registry import component_registry
from jaxecon.foundation.host_components import HostComponent

__all__ = ["BaseComponent", "component_registry"]


class _ConstructionWorld:
    """What ``world`` is while a component is being built (``__init__``).

    Attributes (as the shim's ``World``): ``world_size`` [H, W], ``n_agents``,
    ``resources`` (sorted), ``landmarks`` (source blocks included),
    ``multi_action_mode_agents``, ``multi_action_mode_planner``.
    """

    def __init__(self, spec):
        self.world_size = list(spec.world_size)
        self.n_agents = spec.n_agents
        self.resources = list(spec.resources)
        self.landmarks = list(spec.landmarks)
        self.multi_action_mode_agents = spec.multi_action_mode_agents
        self.multi_action_mode_planner = spec.multi_action_mode_planner

    def __getattr__(self, name):
        raise AttributeError(
            f"world.{name} is not available while the component is being constructed; "
            "use it in the component's hooks (additional_reset_steps, component_step, ...)"
        )


class BaseComponent(metaclass=abc.ABCMeta):
    """Foundation's base class of components, for components written in numpy.

    Class attributes (as Foundation): ``name`` (registry name),
    ``component_type`` (shorthand of metric and dense-log keys, None: name),
    ``agent_subclasses`` (list/tuple of agent class names it acts on),
    ``required_entities`` (list/tuple of resource/landmark/endogenous names).

    Args:
        world: the world view (see the module docstring).
        episode_length: int > 0, timesteps per episode.
        inventory_scale: observation scale of inventories (the env's
            ``inv_scale``).

    Raises:
        ValueError: a missing ``name``, ``agent_subclasses`` that is not a
            non-empty list/tuple, ``required_entities`` that is not a
            list/tuple, or a bad ``episode_length`` (Foundation asserts).

    Hooks to implement (Foundation's abstract methods): ``get_n_actions``,
    ``get_additional_state_fields``, ``component_step``,
    ``generate_observations``, ``generate_masks``; optional:
    ``additional_reset_steps``, ``get_metrics``, ``get_dense_log``.
    """

    name = ""
    component_type = None
    agent_subclasses = None
    required_entities = None

    def __init__(self, world, episode_length, inventory_scale=1):
        if not self.name:
            raise ValueError(f"component class {type(self).__name__} needs a name")
        if not isinstance(self.agent_subclasses, (tuple, list)) or not self.agent_subclasses:
            raise ValueError(f"component {self.name}: agent_subclasses must be a non-empty list or tuple")
        if not isinstance(self.required_entities, (tuple, list)):
            raise ValueError(f"component {self.name}: required_entities must be a list or tuple")
        self._world = world
        if isinstance(episode_length, bool) or not isinstance(episode_length, (int, np.integer)) \
                or episode_length <= 0:
            raise ValueError(f"component {self.name}: episode_length must be an int > 0, got {episode_length!r}")
        self._episode_length = int(episode_length)
        self.n_agents = world.n_agents
        self.resources = world.resources
        self.landmarks = world.landmarks
        self.timescale = 1
        self._inventory_scale = float(inventory_scale)

    @classmethod
    def __subclasshook__(cls, other):
        """jaxecon components count as subclasses, as every registered component
        is a ``BaseComponent`` subclass in Foundation."""
        if cls is BaseComponent and isinstance(other, type) and issubclass(other, Component):
            return True
        return NotImplemented

    @classmethod
    def build_core_component(cls, spec, kwargs) -> HostComponent:
        """Build the object with Foundation's signature and its stand-in in the
        core (what ``jaxecon.core.env`` calls for a Foundation-style class).

        Args:
            spec: the economy's ``EnvSpec``.
            kwargs: the component's keyword arguments from ``components``.
        """
        obj = cls(_ConstructionWorld(spec), spec.episode_length, inventory_scale=spec.inv_scale, **kwargs)
        return HostComponent(spec, obj)

    # ----------------------------------------------------------- Foundation's API
    @property
    def world(self):
        """The environment's ``World`` view (``maps``, ``agents``, ``planner``, ...)."""
        return self._world

    @property
    def episode_length(self) -> int:
        """Episode length of the environment."""
        return int(self._episode_length)

    @property
    def inv_scale(self) -> float:
        """Scale of inventory observations (the environment's ``inv_scale``)."""
        return self._inventory_scale

    @property
    def shorthand(self) -> str:
        """``component_type``, or ``name`` if it is None."""
        return self.name if self.component_type is None else self.component_type

    @staticmethod
    def check_world(world):
        """Foundation validates the world object; the shim's views need no check."""

    def reset(self):
        """Reset the component's agent-state fields and call ``additional_reset_steps``
        (Foundation's ``BaseComponent.reset``)."""
        world = self.world
        for agent in world.agents + [world.planner]:
            agent.state.update(self.get_additional_state_fields(agent.name))
        self.additional_reset_steps()

    def obs(self) -> dict:
        """``generate_observations()`` keyed by ``str(agent.idx)``."""
        obs = self.generate_observations()
        if not isinstance(obs, dict):
            raise TypeError(f"component {self.name}: generate_observations must return a dict")
        return {str(k): v for k, v in obs.items()}

    @abc.abstractmethod
    def get_n_actions(self, agent_cls_name):
        """Actions (NO-OP excluded) for agents of kind ``agent_cls_name``:
        None, an int, or a list of ``(sub-action name, n)``."""

    @abc.abstractmethod
    def get_additional_state_fields(self, agent_cls_name) -> dict:
        """``{state field: reset value}`` this component adds to ``agent.state``."""

    @abc.abstractmethod
    def component_step(self):
        """Apply the step's actions (``agent.get_component_action(self.name)``)."""

    @abc.abstractmethod
    def generate_observations(self) -> dict:
        """``{agent.idx: {key: value}}`` (``"p"`` for the planner, ``"p<i>"`` for
        its per-agent entries)."""

    @abc.abstractmethod
    def generate_masks(self, completions=0) -> dict:
        """``{agent.idx: mask}`` for the agents acting through this component.
        The default (callable with ``super()``) allows every action."""
        world = self.world
        masks = {}
        for agent in world.agents + [world.planner]:
            n_actions = self.get_n_actions(agent.name)
            if n_actions is None:
                continue
            if isinstance(n_actions, (int, float)):
                masks[agent.idx] = np.ones(int(n_actions))
            elif isinstance(n_actions, (tuple, list)):
                masks[agent.idx] = {sub: np.ones(int(k)) for sub, k in n_actions}
            else:
                raise TypeError(f"component {self.name}: get_n_actions returned {n_actions!r}")
        return masks

    def additional_reset_steps(self):
        """Extra reset steps (internal trackers). Default: nothing."""
        return

    def get_metrics(self):
        """``{key: scalar}`` episode metrics (prefixed ``<shorthand>/``), or None."""
        return None

    def get_dense_log(self):
        """The episode's dense log of this component (dict, list or None)."""
        return None
