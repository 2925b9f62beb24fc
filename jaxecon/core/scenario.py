"""A scenario: Foundation's scenario hooks as pure functions, and its static configuration.

Follows ``ai_economist/foundation/base/base_env.py``: a Foundation scenario
subclasses ``BaseEnvironment`` and implements its hooks
(``reset_starting_layout``, ``reset_agent_states``, ``scenario_step``,
``generate_observations``, ``compute_reward``, ...). In jaxecon a scenario
subclasses ``Scenario``, which holds only that: the keyword arguments
Foundation's ``BaseEnvironment`` takes (checked), the scenario's own, and the
hooks, each a pure function of a PRNG key, an ``EnvState`` and ``EnvParams``.
The engine that owns the components and the scenario and runs reset and step
as one ordered list of phases is ``jaxecon.core.env.Economy``;
``jaxecon.make`` builds one from a registered scenario's name.
"""

from __future__ import annotations

import os
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core import validators as cfg
from jaxecon.core.bounds import bound_of
from jaxecon.core.component import NoParams
from jaxecon.core.groups import MOBILE, PLANNER, parse_groups
from jaxecon.core.registry import (
    agent_registry,
    component_registry,
    endogenous_registry,
    landmark_registry,
    resource_registry,
)
from jaxecon.core.state import EnvState, NoState, SubState, float_dtype

__all__ = ["FOUNDATION_SCENARIO_HOOKS", "SCENARIO_HOOKS", "Scenario", "parse_components"]

#: The scenario hooks the engine runs (``jaxecon.core.env.Economy``): each is a
#: method of ``Scenario`` with a default that a scenario overrides.
SCENARIO_HOOKS = (
    "static_spec", "components_built", "unread_params", "init_scenario_state",
    "reset_starting_layout", "reset_agent_states", "additional_reset_steps", "carry_over",
    "scenario_step", "generate_observations", "generate_observation_spaces", "compute_reward",
    "scenario_metrics", "optimization_metrics", "step_info", "default_scenario_params",
)

#: The scenario hooks of Foundation's ``BaseEnvironment`` among ``SCENARIO_HOOKS``
#: (same names), in the order they run: those a Foundation-style scenario class
#: of the shim may write in numpy, which the shim's host engine then runs on the
#: host in their places (``jaxecon.foundation.host_scenario``,
#: ``jaxecon.foundation.host_engine``). The others are jaxecon's own.
FOUNDATION_SCENARIO_HOOKS = (
    "reset_starting_layout", "reset_agent_states", "additional_reset_steps",
    "scenario_step", "generate_observations", "compute_reward", "scenario_metrics",
)


def parse_components(components) -> list[tuple[str, dict]]:
    """Normalise Foundation's ``components`` argument to ``[(name, kwargs), ...]``.

    Accepts a list/tuple whose items are ``(name, kwargs)`` pairs or one-entry
    ``{name: kwargs}`` dicts.

    Raises:
        ValueError: for any other shape, naming the bad item.
    """
    if not isinstance(components, (list, tuple)):
        raise ValueError(
            f"components must be a list of (name, kwargs) tuples or {{name: kwargs}} dicts, "
            f"got {components!r}"
        )
    out = []
    for item in components:
        if isinstance(item, dict) and len(item) == 1:
            (name, kwargs), = item.items()
        elif isinstance(item, (list, tuple)) and len(item) == 2:
            name, kwargs = item
        else:
            raise ValueError(
                f"each entry of components must be (name, kwargs) or {{name: kwargs}}, got {item!r}"
            )
        if not isinstance(name, str) or not isinstance(kwargs, dict):
            raise ValueError(
                f"component entry {item!r}: name must be a str and kwargs a dict"
            )
        out.append((name, dict(kwargs)))
    return out



def _physical_memory_bytes() -> int | None:
    """This machine's physical memory (bytes), or None where the OS does not say."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, ValueError, OSError):
        return None


def _check_world_fits_in_memory(world_size, n_maps: int) -> None:
    """Refuse, naming ``world_size``, a world whose ``n_maps`` H x W maps (8 bytes
    a cell, as numpy builds them) alone exceed this machine's memory: numpy
    would fail later with an allocation error that names no argument.

    Raises:
        ValueError: the estimate and the memory, in GiB.
    """
    total = _physical_memory_bytes()
    h, w = world_size
    need = h * w * max(1, n_maps) * 8
    if total is not None and need > total:
        raise ValueError(
            f"world_size [{h}, {w}] is out of reach: its {max(1, n_maps)} world maps alone take "
            f"{need / 2**30:,.1f} GiB ({h} x {w} cells x 8 bytes each), more than this machine's "
            f"{total / 2**30:,.1f} GiB of memory"
        )

def _mobile_classes(scenario_cls, components: list) -> tuple:
    """The mobile agent classes a scenario lists in ``agent_subclasses`` (every
    listed class but ``BasicPlanner`` and its subclasses), in its order, once
    the listing follows ``Scenario``'s rules (its docstring): every listed
    name registered, none subclassing another listed one (a class may
    subclass ``BasicMobileAgent``, which is how it inherits a mobile agent's
    state, and be listed beside it), and no component acting on a class the
    scenario does not list (Foundation's two classes excepted: a component
    may name the planner in an economy without one).

    Raises:
        ValueError: naming the class, or the component and the class.
    """
    listed = tuple(scenario_cls.agent_subclasses)
    where = f"scenario {scenario_cls.name!r}'s agent_subclasses {list(listed)}"
    for name in listed:
        if not agent_registry.has(name):
            raise ValueError(f"{where} names {name!r}, which is not a registered agent class: register it with "
                             f"@agent_registry.add (registered: {agent_registry.entries})")
    cls = {n: agent_registry.get(n) for n in listed}
    for a in listed:
        for b in listed:
            if a != b and b not in (MOBILE, PLANNER) and issubclass(cls[a], cls[b]):
                raise ValueError(f"{where}: {a!r} subclasses {b!r}; list agent classes none of which "
                                 "subclasses another")
    for c in components:
        bad = [n for n in getattr(c, "agent_subclasses", ()) if n not in listed and n not in (MOBILE, PLANNER)]
        if bad:
            raise ValueError(f"component {c.name!r} acts on the agent classes {bad}, which {where} does not list")
    planner = agent_registry.get(PLANNER)
    return tuple(n for n in listed if not issubclass(cls[n], planner)) or (MOBILE,)


def _class_groups(counts, mobile_classes: tuple, n_agents: int):
    """``mobile_agent_groups`` for ``n_agents_per_class``: one group per class,
    named after it, in ``mobile_classes`` order (None, Foundation's one group,
    for ``BasicMobileAgent`` alone).

    Raises:
        ValueError: not a non-empty dict of ints >= 1 keyed by listed mobile
            classes, a listed mobile class without a count, or counts that do
            not sum to ``n_agents`` (naming them).
    """
    if not isinstance(counts, dict) or not counts:
        raise ValueError("n_agents_per_class must be a non-empty dict {agent class name: count}, got "
                         + ("an empty dict" if isinstance(counts, dict) else repr(counts)))
    bad = [c for c in counts if c not in mobile_classes]
    if bad:
        raise ValueError(f"n_agents_per_class names {bad}, which are not mobile agent classes of the scenario's "
                         f"agent_subclasses; allowed: {list(mobile_classes)}")
    for c, k in counts.items():
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise ValueError(f"n_agents_per_class[{c!r}] must be an int >= 1, got {k!r}")
    missing = [c for c in mobile_classes if c not in counts]
    if missing:
        raise ValueError(f"n_agents_per_class gives no count for {missing}: give every mobile agent class the "
                         f"scenario lists ({list(mobile_classes)}) its count, each >= 1")
    total = sum(int(k) for k in counts.values())
    if total != n_agents:
        raise ValueError(f"n_agents_per_class's counts {dict(counts)} sum to {total}, but n_agents is {n_agents}; "
                         "they must be equal")
    if list(mobile_classes) == [MOBILE]:
        return None
    return [{"name": c, "n_agents": int(counts[c]), "agent_class": c} for c in mobile_classes if c in counts]


class Scenario:
    """Base class of scenarios: their static configuration and Foundation's scenario hooks.

    A scenario's ``__init__`` takes its own keyword arguments and passes
    ``BaseEnvironment``'s (below) to this one first, then sets and checks its
    own static attributes. The engine (``jaxecon.core.env.Economy``, which
    ``jaxecon.make`` builds) then builds the components from the frozen
    ``EnvSpec``, which includes the scenario's ``static_spec()``, hands them to
    the scenario (``attach_components``, which calls ``components_built``) and
    runs the hooks (``SCENARIO_HOOKS``) in its phases. A hook never calls the
    engine; it reads the state, the params and this configuration, and
    ``get_component`` for a component's static configuration.

    Args (Foundation's ``BaseEnvironment`` keyword arguments and defaults):
        components: list of ``(name, kwargs)`` or ``{name: kwargs}``; required.
        n_agents: int >= 2, number of mobile agents.
        world_size: [H, W] list/tuple of two positive ints (a world whose maps
            alone exceed the machine's memory is a ValueError naming it).
        episode_length: int in 1..2**31 - 1 (the timestep is an int32), timesteps per episode.
        multi_action_mode_agents: bool (False): one action per subspace per step.
        multi_action_mode_planner: bool (True).
        flatten_observations: bool (True): pack non-spatial obs into ``"flat"``.
        flatten_masks: bool (True): action masks as one float vector.
        allow_observation_scaling: bool (True): inventories observed x0.01 and
            time as t / episode_length.
        dense_log_frequency: None or int >= 1 (used by the stateful shim).
        world_dense_log_frequency: int >= 1 (used by the stateful shim).
        collate_agent_step_and_reset_data: bool (False) (used by the shim; the
            functional API always returns ``{"a": ..., "p": ...}``).
        seed: None or int >= 0: default seed of the shim and CLI. (Foundation
            rejects 0, quirk Q11; jaxecon accepts it.)
        mobile_agent_groups: None (one group ``"a"`` of every mobile agent,
            Foundation's) or a list of mobile-agent types, each a dict
            ``{"name", "n_agents", "components", "skill_dist", "reward"}``
            (``jaxecon.core.groups.parse_groups``; ``reward``: the type's
            values of the scenario's ``agent_reward_params``). jaxecon only.
        n_planners: None (1, or as many as ``planner_groups`` declares), 0
            (no planner) or 1 (the planner, group ``"p"``); with
            ``planner_groups``, their number. jaxecon only.
        planner_groups: None (Foundation's one planner ``"p"``) or a list of
            planners, each a dict ``{"name", "components"}``: its group name
            and the components whose planner actions it takes
            (``jaxecon.core.groups.parse_groups``). jaxecon only.
        n_agents_per_class: None, or ``{agent class name: int >= 1}`` for a
            scenario whose ``agent_subclasses`` lists several mobile agent
            classes (``BasicMobileAgent`` and registered subclasses of it):
            how many agents of each (every listed mobile class, each >= 1),
            summing to ``n_agents``. Each class
            becomes a group named after it (in ``agent_subclasses`` order;
            mobile agents numbered in that order), acted on by the components
            that list the class. jaxecon's (Foundation's scenarios have one
            mobile class).

    Agent classes (``agent_subclasses``): every name must be registered in the
    agent registry; none may subclass another listed one (Foundation's rule),
    except that a class may subclass ``BasicMobileAgent`` (or
    ``BasicPlanner``) and be listed beside it, which Foundation's check
    forbids and its issue #97 asks for; every component's
    ``agent_subclasses`` must name only listed classes (besides Foundation's
    two).

    Groups: ``agent_groups`` (``jaxecon.core.groups.AgentGroup``), parsed here
    from ``mobile_agent_groups``, ``n_planners`` and ``planner_groups``; the engine keys every
    observation, action, reward, mask and space by them.

    Raises:
        ValueError / TypeError: for bad values or unknown keyword arguments,
            naming the argument and the allowed values.
        KeyError: for an unknown component name, listing the known ones.
    """

    name: str = ""
    #: Marks jaxecon scenario classes: the scenario registry accepts only these.
    jaxecon_scenario: bool = True
    agent_subclasses: tuple = (MOBILE, PLANNER)
    required_entities: tuple = ()
    Params: type = NoParams
    #: The ``Params`` fields that weigh each mobile agent's reward and may take a
    #: value per mobile-agent type (a group's ``reward``); with any such value
    #: declared, ``default_params`` holds each as float [n_agents], and the
    #: scenario's reward must read it elementwise. Default: none.
    agent_reward_params: tuple = ()
    #: What ``jaxecon run`` records of the scenario's episodes: a key of
    #: ``jaxecon.cli.recorders.RECORDERS``; ``"gridworld"``: the dense log, its
    #: plots and the video of the maps, locations and inventories.
    run_recorder: str = "gridworld"

    def __init__(
        self,
        components=None,
        n_agents=None,
        world_size=None,
        episode_length=1000,
        multi_action_mode_agents=False,
        multi_action_mode_planner=True,
        flatten_observations=True,
        flatten_masks=True,
        allow_observation_scaling=True,
        dense_log_frequency=None,
        world_dense_log_frequency=50,
        collate_agent_step_and_reset_data=False,
        seed=None,
        mobile_agent_groups=None,
        n_planners=None,
        planner_groups=None,
        n_agents_per_class=None,
    ):
        if components is None:
            raise ValueError("components is required: a list of (name, kwargs)")
        if isinstance(n_agents, bool) or not isinstance(n_agents, (int, np.integer)):
            raise ValueError(f"n_agents must be an int >= 2, got {n_agents!r}")
        self.n_agents = cfg.check_int("n_agents", n_agents, minimum=2)
        if isinstance(world_size, np.ndarray) and world_size.ndim == 1:
            world_size = world_size.tolist()
        if not isinstance(world_size, (list, tuple)) or len(world_size) != 2:
            raise ValueError(f"world_size must be [H, W] (two ints), got {world_size!r}")
        self.world_size = (
            cfg.check_int("world_size[0]", world_size[0], minimum=1),
            cfg.check_int("world_size[1]", world_size[1], minimum=1),
        )
        # the timestep is an int32: a longer episode would never end
        self.episode_length = cfg.check_int("episode_length", episode_length, minimum=1, maximum=2**31 - 1)
        self.multi_action_mode_agents = cfg.check_bool(
            "multi_action_mode_agents", multi_action_mode_agents
        )
        self.multi_action_mode_planner = cfg.check_bool(
            "multi_action_mode_planner", multi_action_mode_planner
        )
        self.flatten_observations = cfg.check_bool("flatten_observations", flatten_observations)
        self.flatten_masks = cfg.check_bool("flatten_masks", flatten_masks)
        self.allow_observation_scaling = cfg.check_bool(
            "allow_observation_scaling", allow_observation_scaling
        )
        self.dense_log_frequency = (
            None
            if dense_log_frequency is None
            else cfg.check_int("dense_log_frequency", dense_log_frequency, minimum=1)
        )
        self.world_dense_log_frequency = cfg.check_int(
            "world_dense_log_frequency", world_dense_log_frequency, minimum=1
        )
        self.collate_agent_step_and_reset_data = cfg.check_bool(
            "collate_agent_step_and_reset_data", collate_agent_step_and_reset_data
        )
        self.seed = None if seed is None else cfg.check_int("seed", seed, minimum=0)
        self.inv_scale = 0.01 if self.allow_observation_scaling else 1.0

        parsed = parse_components(components)
        names = [n for n, _ in parsed]
        classes = [component_registry.get(n) for n in names]
        canonical = [c.name for c in classes]
        if len(set(canonical)) != len(canonical):
            raise ValueError(f"components must not repeat a name, got {canonical}")

        # Entities: Coin and Labor always, plus what the scenario and components need.
        entities = {"Coin", "Labor"} | set(self.required_entities)
        for c in classes:
            entities |= set(c.required_entities)
        self.resources = sorted(e for e in entities if resource_registry.has(e))
        self.endogenous = sorted(e for e in entities if endogenous_registry.has(e))
        landmarks = sorted(e for e in entities if landmark_registry.has(e))
        unknown = entities - set(self.resources) - set(self.endogenous) - set(landmarks)
        if unknown:
            raise ValueError(f"unknown entities required: {sorted(unknown)}")
        self.collectible = [r for r in self.resources if resource_registry.get(r).collectible]
        self.landmarks = landmarks + [r + "SourceBlock" for r in self.collectible]
        self.map_keys = tuple(self.collectible + self.landmarks)
        self.private_landmarks = tuple(
            l for l in self.landmarks if landmark_registry.get(l).is_private()
        )
        self.blocking_landmarks = tuple(
            l for l in self.landmarks if landmark_registry.get(l).is_blocking()
        )

        #: ``[(component class, kwargs), ...]`` of ``components``, in list order.
        self.component_entries = [(cls, kwargs) for cls, (_, kwargs) in zip(classes, parsed)]
        mobile_classes = _mobile_classes(type(self), classes)
        if n_agents_per_class is not None:
            if mobile_agent_groups is not None:
                raise ValueError("give n_agents_per_class or mobile_agent_groups, not both")
            mobile_agent_groups = _class_groups(n_agents_per_class, mobile_classes, self.n_agents)
        elif len(mobile_classes) > 1 and mobile_agent_groups is None:
            raise ValueError(f"scenario {self.name!r} lists the mobile agent classes {list(mobile_classes)}: give "
                             "each its count with n_agents_per_class={class name: count}")
        mobile = {c.name: getattr(c, "draws_skills", False)
                  for c in classes if set(mobile_classes) & set(getattr(c, "agent_subclasses", ()))}
        reward_params = {f: bound_of(self.Params, f) for f in self.agent_reward_params}
        planner = tuple(c.name for c in classes if PLANNER in getattr(c, "agent_subclasses", ()))
        self.agent_groups = parse_groups(self.n_agents, mobile_agent_groups, n_planners, mobile, reward_params,
                                         planner_groups, planner, mobile_classes,
                                         {c.name: tuple(getattr(c, "agent_subclasses", ())) for c in classes})
        _check_world_fits_in_memory(self.world_size, len(self.map_keys) + len(self.private_landmarks))

    def attach_components(self, components: list) -> None:
        """Hand the scenario its built components (``Component`` instances, in
        list order), then run its ``components_built`` hook. The engine calls
        it once, when it is built.

        Raises:
            RuntimeError: called a second time.
        """
        if "_components" in self.__dict__:
            raise RuntimeError(f"the components of scenario {self.name!r} are attached already")
        self._components = list(components)
        self.components_built()

    @property
    def components(self) -> list:
        """The economy's components (``Component`` instances), in list order.

        Raises:
            RuntimeError: the scenario class was constructed directly and its
                components are not built (use ``jaxecon.make``).
        """
        try:
            return self.__dict__["_components"]
        except KeyError:
            raise RuntimeError(
                f"scenario {self.name!r} has no built components: build economies with jaxecon.make "
                "(or jaxecon.factory.build_scenario), which builds its engine"
            ) from None

    def get_component(self, name: str):
        """The component object by full name or shorthand.

        Raises:
            KeyError: if no component matches; lists the present ones.
            RuntimeError: the components are not built yet (inside the
                scenario's ``__init__``: use ``components_built()``).
        """
        if "_components" not in vars(self):
            raise RuntimeError(
                "components are built after the scenario's __init__ returns; "
                "use them in components_built(), not in __init__"
            )
        for c in self.components:
            if name in (c.name, c.shorthand):
                return c
        raise KeyError(
            f"no component {name!r} in this environment; present: "
            f"{[c.name for c in self.components]}"
        )

    @property
    def component_names(self) -> list:
        """Registry names of the components, in list order (also inside ``__init__``)."""
        return [cls.name for cls, _ in self.component_entries]

    def has_component(self, name: str) -> bool:
        """Whether a component of this full name or shorthand is present (also
        inside ``__init__``, before the components are built)."""
        return any(name in (cls.name, cls.component_type or cls.name) for cls, _ in self.component_entries)

    def default_scenario_params(self):
        """The scenario's ``Params`` with the values given at construction."""
        return self.Params()

    # ----------------------------------------------------------- scenario hooks
    def static_spec(self) -> Any:
        """The scenario's static facts its components may read, as
        ``EnvSpec.scenario`` (a frozen dataclass), or None (the default).

        Called after the scenario's ``__init__`` returns, before any component
        is built. jaxecon only (Foundation components read the live env).
        """
        return None

    def components_built(self) -> None:
        """Called once the components exist: checks and static setup that need
        the component objects (e.g. a required component's kwargs). Raise
        ``ValueError`` naming the problem. Default: nothing. jaxecon only."""

    def unread_params(self) -> tuple:
        """Names of the scenario ``Params`` fields this configuration never reads;
        analysis refuses gradients with respect to them. Default: none."""
        return ()

    def init_scenario_state(self, params) -> SubState:
        """The scenario's typed sub-state (a ``flax.struct`` dataclass) with the right shapes."""
        return NoState()

    def reset_starting_layout(self, key, state: EnvState, params) -> EnvState:
        """Part 1 of reset: the world layout (maps)."""
        return state

    def reset_agent_states(self, key, state: EnvState, params) -> EnvState:
        """Part 2 of reset: inventories, escrow, endogenous, locations."""
        return state

    def additional_reset_steps(self, key, state: EnvState, params) -> EnvState:
        """Last part of reset, after the components' resets."""
        return state

    def carry_over(self, prev_state: EnvState, state: EnvState, params) -> EnvState:
        """After the whole reset, only when ``reset`` is given ``prev_state``: keep
        in the scenario's sub-state what Foundation's scenario keeps across
        episodes (attributes its reset never clears), and re-derive whatever the
        reset computed from them (e.g. reward baselines).

        Args:
            prev_state: ``EnvState`` the previous episode ended in (any timestep;
                a fresh ``init_state`` carries nothing over).
            state: the freshly reset ``EnvState`` (components already carried over).
            params: ``EnvParams``.
        Returns:
            ``state`` with the scenario's carried fields. Default: ``state``
            unchanged (a scenario that keeps nothing across episodes).
        """
        return state

    def scenario_step(self, key, state: EnvState, params) -> EnvState:
        """Scenario dynamics after the components' steps."""
        return state

    def generate_observations(self, state: EnvState, params) -> Observed:
        """Scenario observations, unprefixed: an ``Observed`` (``jaxecon.core.agent_kinds``:
        the mobile agents' fields [n, ...], the planner's, the planner's view of each agent)."""
        return Observed()

    def generate_observation_spaces(self) -> dict | None:
        """The spaces of ``generate_observations``' fields, from static configuration:
        an ``Observed`` of ``{k: Box}``, one agent's entry each, as ``Component.observation_spaces`` (whose docstring gives the
        rules). Default ``None`` (undeclared): shapes and dtypes are inferred
        with ``jax.eval_shape`` and the bounds left infinite. jaxecon only."""
        return None

    def compute_reward(self, state: EnvState, params):
        """``(PerKind(mobile=float [n], planner=float []), new_state)``: each mobile
        agent's reward and the planner's (``jaxecon.core.agent_kinds``)."""
        f = float_dtype()
        return PerKind(mobile=jnp.zeros(self.n_agents, f), planner=jnp.zeros((), f)), state

    def scenario_metrics(self, state: EnvState, params) -> dict:
        """Scenario metrics ``{key: scalar}``.

        Metrics are per group: a planner's metrics are keyed by its group's
        name (``planner_group_names``), so Foundation's groups report
        Foundation's ``"p"`` keys, an economy without a planner no planner
        key, and several planners one set each."""
        return {}

    @property
    def planner_group_names(self) -> tuple:
        """The planners' group names in declared order, the ``<group>`` of the
        planner metric keys (``"util/<group>"``): ``("p",)`` for Foundation's
        groups, ``()`` without a planner."""
        return tuple(g.name for g in self.agent_groups if g.kind == PLANNER)

    def optimization_metrics(self, state: EnvState, params) -> jax.Array:
        """float [n + 1]: each mobile agent's utility, then the planner's
        objective (Foundation's ``curr_optimization_metric``), for analysis.

        Raises:
            ValueError: the default, for a scenario that defines none.
        """
        raise ValueError(f"scenario {self.name!r} has no optimization_metrics")

    def step_info(self, state: EnvState, params) -> dict:
        """Per-step ``info``: cheap metrics (``{key: scalar}``)."""
        return {}

