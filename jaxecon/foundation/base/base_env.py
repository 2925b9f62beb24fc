"""Foundation's ``base/base_env.py``: ``BaseEnvironment`` and ``scenario_registry``.

Follows ``ai_economist/foundation/base/base_env.py`` of ai-economist 1.7.1.
``BaseEnvironment`` is the base class of the shim's scenario classes, and
``scenario_registry`` (``foundation.scenarios``) maps names to them:

- ``scenario_registry.get("layout_from_file/simple_wood_and_stone")`` is the
  shim class of that jaxecon scenario (made on first lookup, one class per
  name); ``foundation.make_env_instance(name, **kwargs)`` is
  ``scenario_registry.get(name)(**kwargs)``, so ``isinstance(env,
  scenario_registry.get(name))`` and ``isinstance(env, BaseEnvironment)``
  hold, as in Foundation;
- a subclass written in numpy against Foundation's scenario hooks
  (``reset_starting_layout``, ``reset_agent_states``, ``scenario_step``,
  ``generate_observations``, ``compute_reward``, and optionally
  ``additional_reset_steps``, ``scenario_metrics``) runs them on the host, in
  Foundation's order, among the jitted jaxecon parts
  (``jaxecon.foundation.host_engine``); subclassing a jaxecon scenario's
  class overrides only the hooks it defines (``super().compute_reward()``
  runs the jaxecon one). Register it with ``@scenario_registry.add``.

``jaxecon.scenario_registry`` keeps the functional classes that
``jaxecon.make`` builds: adding a jaxecon scenario (a subclass of
``jaxecon.core.scenario.Scenario``) here adds it there too, so it works in
both APIs; a Foundation-style numpy class lives only here (the shim runs it).
As in Foundation, registering a name again replaces the entry.
"""

from __future__ import annotations

import abc
import copy

from jaxecon.core.scenario import Scenario as CoreScenario
from jaxecon.core.registry import scenario_registry as core_scenario_registry
from jaxecon.foundation.env import FoundationEnv
from jaxecon.foundation.host_scenario import scenario_core

__all__ = ["BaseEnvironment", "ScenarioRegistry", "make_env_instance", "scenario_registry"]

#: ``BaseEnvironment``'s positional parameters, in Foundation's order.
BASE_ARGS = (
    "components", "n_agents", "world_size", "episode_length", "multi_action_mode_agents",
    "multi_action_mode_planner", "flatten_observations", "flatten_masks",
    "allow_observation_scaling", "dense_log_frequency", "world_dense_log_frequency",
    "collate_agent_step_and_reset_data", "seed",
)


class BaseEnvironment(FoundationEnv, abc.ABC):
    """Foundation's base class of scenarios (a ``FoundationEnv``).

    Class attributes (as Foundation): ``name`` (registry name),
    ``agent_subclasses`` (agent class names), ``required_entities``
    (resource/landmark/endogenous names the scenario needs).

    Args:
        *args, **kwargs: Foundation's ``BaseEnvironment`` arguments
            (``components``, ``n_agents``, ``world_size``, ``episode_length``,
            ...; positionally in that order) and, for a jaxecon scenario's
            class, the scenario's own keyword arguments.

    Raises:
        TypeError: too many positional arguments, an argument given twice or
            an unknown keyword argument; as ``make_env_instance`` otherwise.

    A scenario written from scratch implements ``reset_starting_layout``,
    ``reset_agent_states``, ``scenario_step``, ``generate_observations`` and
    ``compute_reward`` (abstract, as in Foundation) against ``self.world``;
    ``additional_reset_steps`` and ``scenario_metrics`` are optional.
    """

    name = ""
    agent_subclasses = ["BasicMobileAgent", "BasicPlanner"]
    required_entities = None

    def __new__(cls, *args, **kwargs):
        """Record the constructor's arguments (the outermost class's, which a
        scenario's own ``__init__`` does not pass on): ``__init__`` makes them
        the environment's ``_config``, with which pickling builds it again."""
        env = super().__new__(cls)
        object.__setattr__(env, "_constructor_args", (args, copy.deepcopy(kwargs)))
        return env

    def __init__(self, *args, **kwargs):
        if len(args) > len(BASE_ARGS):
            raise TypeError(f"{type(self).__name__} takes at most {len(BASE_ARGS)} positional arguments")
        for name, value in zip(BASE_ARGS, args):
            if name in kwargs:
                raise TypeError(f"{type(self).__name__} got argument {name!r} twice")
            kwargs[name] = value
        core_cls, host = scenario_core(type(self), BaseEnvironment, _builtin_core)
        self._build(core_cls, kwargs, {h: getattr(self, h) for h in host})
        self._config = vars(self)["_constructor_args"]

    def __reduce_ex__(self, protocol):
        if vars(type(self)).get("_from_registry", False):
            return _restore_registered, (type(self).name, self.__getstate__())
        return super().__reduce_ex__(protocol)

    def _rebuild(self, config) -> None:
        """Construct again with the pickled constructor arguments ``config``."""
        args, kwargs = config
        kwargs = dict(kwargs)
        if "seed" in kwargs:
            kwargs["seed"] = None  # unpickling must not reseed the global RNGs
        type(self).__init__(self, *args, **kwargs)
        self._config = config

    # ------------------------------------------------------- Foundation's hooks
    @abc.abstractmethod
    def reset_starting_layout(self):
        """Part 1 of the scenario's reset: the world layout (``self.world.maps``)."""

    @abc.abstractmethod
    def reset_agent_states(self):
        """Part 2 of the scenario's reset: the agents (inventories, locations, ...)."""

    @abc.abstractmethod
    def scenario_step(self):
        """The scenario's dynamics, after every component's step."""

    @abc.abstractmethod
    def generate_observations(self) -> dict:
        """``{agent.idx: {key: value}}`` (``"world-"`` is prefixed)."""

    @abc.abstractmethod
    def compute_reward(self) -> dict:
        """``{agent.idx: float}`` for every agent, the planner (``"p"``) included."""

    def additional_reset_steps(self):
        """Last part of the reset, after the components'. Default: nothing."""

    def scenario_metrics(self):
        """``{key: scalar}`` scenario metrics, or None (the default)."""
        return None


def _restore_registered(name: str, state: dict):
    """Unpickle an environment of the registered scenario class ``name``."""
    cls = scenario_registry.get(name)
    env = cls.__new__(cls)
    env.__setstate__(state)
    return env


class _JaxeconScenario(BaseEnvironment):
    """Base of the shim classes of jaxecon scenarios: every hook is the core's.

    Called from Python (typically as ``super().<hook>()`` in a subclass that
    overrides it), a hook runs the jaxecon scenario's jitted hook on the
    current state (``jaxecon.foundation.host_engine.CoreScenarioHooks``).
    """

    _core_class = None

    def reset_starting_layout(self):
        """The jaxecon scenario's ``reset_starting_layout`` on the current state."""
        return self._core_hooks("reset_starting_layout")

    def reset_agent_states(self):
        """The jaxecon scenario's ``reset_agent_states`` on the current state."""
        return self._core_hooks("reset_agent_states")

    def additional_reset_steps(self):
        """The jaxecon scenario's ``additional_reset_steps`` on the current state."""
        return self._core_hooks("additional_reset_steps")

    def scenario_step(self):
        """The jaxecon scenario's ``scenario_step`` on the current state."""
        return self._core_hooks("scenario_step")

    def generate_observations(self) -> dict:
        """The jaxecon scenario's observations of the current state, ``{idx: {key: value}}``."""
        return self._core_hooks("generate_observations")

    def compute_reward(self) -> dict:
        """The jaxecon scenario's rewards for the current state, ``{idx: float}``."""
        return self._core_hooks("compute_reward")

    def scenario_metrics(self):
        """The jaxecon scenario's metrics of the current state."""
        return self._core_hooks("scenario_metrics")


def _builtin_core(klass):
    """The jaxecon scenario class the shim class ``klass`` stands for, or None."""
    return vars(klass).get("_core_class")


class ScenarioRegistry:
    """Foundation's scenario registry in the shim (``foundation.scenarios``).

    ``get(name)`` returns the shim class of a registered name: the class
    added with ``add``, or else the shim class of the jaxecon scenario
    registered under that name in ``jaxecon.scenario_registry`` (made on first
    lookup and kept: the same class every time). ``has``, ``entries`` and
    ``in`` cover both. Names are case-insensitive.
    """

    def __init__(self):
        self._classes: dict = {}  # lower name -> shim class (added or made)

    def add(self, cls):
        """Register ``cls`` (a decorator), replacing any class of that name.

        Args:
            cls: a shim scenario class (a subclass of ``BaseEnvironment``:
                registered here only) or a jaxecon scenario class (a subclass
                of ``jaxecon.core.scenario.Scenario``: registered in
                ``jaxecon.scenario_registry``, so ``jaxecon.make`` builds it,
                and served here through its shim class).
        Returns:
            ``cls``.
        Raises:
            TypeError: any other class (the message says what it lacks).
            ValueError: a missing name, or one containing '.'.
        """
        if isinstance(cls, type) and issubclass(cls, BaseEnvironment):
            name = cls.name
            if not isinstance(name, str) or not name:
                raise ValueError(f"scenario class {cls!r} needs a non-empty string `name`")
            if "." in name:
                raise ValueError(f"scenario name {name!r} may not contain '.'")
            self._classes[name.lower()] = cls
            return cls
        if isinstance(cls, type) and issubclass(cls, CoreScenario):
            core_scenario_registry.add(cls)
            self._classes.pop(cls.name.lower(), None)
            return cls
        raise TypeError(
            f"scenario class {getattr(cls, '__name__', cls)!r} is neither a Foundation-style "
            "scenario (a subclass of jaxecon.foundation.base.base_env.BaseEnvironment) nor a "
            "jaxecon one (a subclass of jaxecon.core.scenario.Scenario)"
        )

    def get(self, name: str):
        """The shim scenario class registered as ``name`` (case-insensitive).

        Raises:
            KeyError: no such scenario; the message lists the known names.
        """
        key = str(name).lower()
        cls = self._classes.get(key)
        if cls is not None and not vars(cls).get("_from_registry"):
            return cls  # added with ``add``
        try:
            core_cls = core_scenario_registry.get(name)
        except KeyError:
            raise KeyError(f"unknown scenario {name!r}; known scenarios: {self.entries}") from None
        if cls is None or _builtin_core(cls) is not core_cls:  # new, or the jaxecon class was replaced
            cls = self._classes[key] = _shim_class(core_cls)
        return cls

    def has(self, name: str) -> bool:
        """Whether ``name`` is registered (case-insensitive)."""
        return str(name).lower() in self._classes or core_scenario_registry.has(name)

    @property
    def entries(self) -> list:
        """Sorted registered names (original capitalisation)."""
        return sorted({c.name for c in self._classes.values()} | set(core_scenario_registry.entries))

    def __contains__(self, name) -> bool:
        return self.has(name)

    def __repr__(self) -> str:
        return f"ScenarioRegistry({self.entries})"


def _shim_class(core_cls) -> type:
    """The shim class of the jaxecon scenario class ``core_cls``: a subclass of
    the shim class of its nearest registered jaxecon ancestor (else of
    ``_JaxeconScenario``), named and documented as it."""
    base = _JaxeconScenario
    for klass in core_cls.__mro__[1:]:
        name = vars(klass).get("name")
        if name and core_scenario_registry.has(name) and core_scenario_registry.get(name) is klass:
            base = scenario_registry.get(name)
            break
    return type(core_cls.__name__, (base,), {
        "name": core_cls.name,
        "required_entities": list(core_cls.required_entities),
        "agent_subclasses": list(core_cls.agent_subclasses),
        "_core_class": core_cls,
        "_from_registry": True,
        "__module__": __name__,
        "__qualname__": core_cls.__name__,
        "__doc__": (
            f"The shim class of the jaxecon scenario {core_cls.name!r} "
            f"({core_cls.__module__}.{core_cls.__qualname__}): a ``BaseEnvironment`` whose hooks "
            "are that scenario's, jitted. Takes its keyword arguments and ``BaseEnvironment``'s."
        ),
    })


#: Foundation's ``scenario_registry`` (``foundation.scenarios``).
scenario_registry = ScenarioRegistry()


def make_env_instance(scenario_name, **kwargs) -> BaseEnvironment:
    """Build an environment, as ``ai_economist.foundation.make_env_instance``:
    ``scenario_registry.get(scenario_name)(**kwargs)``.

    Args:
        scenario_name: a registered scenario name, e.g.
            ``"layout_from_file/simple_wood_and_stone"`` (case-insensitive).
        **kwargs: Foundation's scenario, component and ``BaseEnvironment``
            keyword arguments (``components``, ``n_agents``, ``world_size``,
            ``episode_length``, ``dense_log_frequency``, ``seed``, ...).
    Returns:
        An instance of ``scenario_registry.get(scenario_name)``.
    Raises:
        KeyError: unknown scenario or component name (lists the known ones).
        TypeError: unknown keyword argument (lists the allowed ones).
        ValueError: bad values (names the argument and the allowed values).
    """
    return scenario_registry.get(scenario_name)(**kwargs)
