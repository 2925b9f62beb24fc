"""The hooks by which components and scenarios face Foundation's objects, outside the engine.

The jitted economy (``jaxecon.core``) needs none of these. They serve two
host-side users of a live Foundation world:

- the stateful shim (``jaxecon.foundation``), which hands out Foundation's
  ``agent.state`` dicts (``get_additional_state_fields``) and the attributes
  of Foundation's scenario objects that jaxecon computes from its arrays
  (``foundation_attributes``);
- interop (``jaxecon.interop.state_from_foundation``), which copies a live
  ``ai_economist`` environment's state into an ``EnvState``
  (``load_foundation_state``).

A component or scenario that has Foundation-facing state declares it by
subclassing :class:`FoundationComponentHooks` or
:class:`FoundationScenarioHooks` beside its engine base class
(``Component``, ``Scenario``) and overriding what it needs; the
readers call the functions below, which give a class without the mixin the
defaults (no extra fields, no computed attributes, nothing to load). So a
component or scenario registers in one place, the registry, and the shim and
interop find its Foundation side from the object itself.

Foundation's hook names: ``agent_state_fields`` and ``planner_state_fields``
implement ``BaseComponent.get_additional_state_fields`` (for mobile agents and
the planner); ``load_foundation_state`` has no Foundation counterpart.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Optional, Protocol

from jaxecon.core.state import EnvState, NoState

__all__ = [
    "EconomyView",
    "FoundationAttribute",
    "FoundationComponentHooks",
    "FoundationScenarioHooks",
    "agent_state_fields",
    "check_declared",
    "foundation_attributes",
    "foundation_class_name",
    "load_component_state",
    "load_scenario_state",
    "planner_state_fields",
]


class EconomyView(Protocol):
    """One stateful environment's economy, read when a property is accessed (so a
    function that keeps the view reads the economy current at its call)."""

    @property
    def state(self) -> Any:
        """The current ``EnvState`` (leaves numpy arrays)."""

    @property
    def params(self) -> Any:
        """The current ``EnvParams``."""

    @property
    def completions(self) -> int:
        """Episodes completed (Foundation's ``_completions``)."""


@dataclass(frozen=True)
class FoundationAttribute:
    """One attribute of Foundation's scenario object that a jaxecon scenario
    computes from its economy (``energy_weight``, ``curr_optimization_metric``
    of the wood-and-stone scenarios, ``current_date`` of COVID-19, ...); the
    shim (``jaxecon.foundation.scenario_attributes``) serves it as
    ``env.<name>`` and ``env.world.<name>``.

    Attributes:
        get: ``get(view: EconomyView) -> value``: the attribute's value (a
            Python scalar, dict, numpy array, datetime, ...; for a method of
            Foundation's, a function that reads ``view`` when called).
        set: None for a read-only attribute (the shim raises
            ``AttributeError`` on assignment), or ``set(value) -> {field:
            new value}``: the fields of the scenario's sub-state
            (``EnvState.scenario``) that hold ``value``; the shim writes them,
            each with the field's shape and dtype (a wrong shape or a NaN/inf
            is a ``ValueError`` naming the attribute). ``set`` raises
            ``ValueError`` naming the attribute and what it accepts for a
            value of the wrong form.
    """

    get: Callable[[EconomyView], Any]
    set: Optional[Callable[[Any], dict]] = None


class FoundationComponentHooks:
    """Mixin of a ``jaxecon.core.component.Component`` with Foundation-facing state."""

    def agent_state_fields(self, state: EnvState) -> dict:
        """Host-side: per-agent fields this component adds to Foundation's ``agent.state``.

        Returns ``{field: np.ndarray [n]}`` (e.g. ``{"build_payment": ...}``).
        Default: none.
        """
        return {}

    def planner_state_fields(self, state: EnvState) -> dict:
        """Host-side: fields this component adds to the planner's ``state``
        (``{field: scalar}``). Default: none."""
        return {}

    def load_foundation_state(self, ref_component, ref_env, state: EnvState) -> EnvState:
        """``state`` with this component's sub-state (and anything else only it
        knows how to read) copied from the live Foundation component
        ``ref_component`` of the live ``ai_economist`` environment ``ref_env``
        (built with the same configuration).

        Called by ``jaxecon.interop.state_from_foundation`` for every component,
        in list order, after the world maps, agents' locations, inventories,
        escrow and endogenous quantities have been copied into ``state``.
        Default: ``load_component_state``'s rule for a component without loader.
        """
        return _nothing_to_load(state.components[self.name], f"component {self.name!r}", state)


class FoundationScenarioHooks:
    """Mixin of a scenario (a ``jaxecon.core.scenario.Scenario`` subclass) with
    Foundation-facing state.

    Attributes:
        foundation_class_name: Foundation's name of the scenario's class where
            it is not the class's own ``__name__`` (the shim's
            ``jaxecon.foundation.scenario_envs``); read from the class itself,
            not inherited: a subclass is a class of its own.
    """

    foundation_class_name: str = ""

    def agent_state_fields(self, state: EnvState) -> dict:
        """Host-side: per-agent fields the scenario adds to Foundation's
        ``agent.state`` after the components' (``{field: np.ndarray [n]}``;
        e.g. COVID-19's "Total Infected"). Default: none."""
        return {}

    def planner_state_fields(self, state: EnvState) -> dict:
        """Host-side: fields the scenario adds to the planner's ``state`` after
        the components' (``{field: scalar or np.ndarray}``). Default: none."""
        return {}

    def foundation_attributes(self) -> dict:
        """The attributes of Foundation's scenario object that this scenario
        computes from its economy, ``{Foundation name: FoundationAttribute}``.
        The stateful shim serves them before the params, state fields and
        static attributes of the same name
        (``jaxecon.foundation.scenario_attributes``). Default: none."""
        return {}

    def load_foundation_state(self, ref_env, state: EnvState) -> EnvState:
        """``state`` with the scenario's sub-state copied from the live
        ``ai_economist`` environment ``ref_env`` (built with the same
        configuration; e.g. its reward baselines ``curr_optimization_metric``).

        Called by ``jaxecon.interop.state_from_foundation`` last, after the
        world, the agents and every component's ``load_foundation_state``.
        Default: ``load_scenario_state``'s rule for a scenario without loader.
        """
        return _nothing_to_load(state.scenario, f"scenario {getattr(self, 'name', '')!r}", state)


#: The Foundation-facing hooks each mixin declares (``FoundationComponentHooks``,
#: ``FoundationScenarioHooks``); a class defining one must subclass its mixin
#: (``check_declared``). Not the hooks the engine runs
#: (``jaxecon.core.scenario.SCENARIO_HOOKS``, ``jaxecon.core.component``).
COMPONENT_MIXIN_HOOKS = ("agent_state_fields", "planner_state_fields", "load_foundation_state")
SCENARIO_MIXIN_HOOKS = COMPONENT_MIXIN_HOOKS + ("foundation_attributes", "foundation_class_name")


def check_declared(cls: type) -> None:
    """Raise unless every Foundation-facing hook that the component or scenario
    class ``cls`` defines is declared by subclassing its mixin (so the shim and
    interop, which read only the mixins' hooks, never silently skip one).

    Raises:
        TypeError: naming the class, the hooks and the mixin to add.
    """
    is_scenario = getattr(cls, "jaxecon_scenario", False) is True
    mixin = FoundationScenarioHooks if is_scenario else FoundationComponentHooks
    if issubclass(cls, mixin):
        return
    names = SCENARIO_MIXIN_HOOKS if is_scenario else COMPONENT_MIXIN_HOOKS
    found = [n for n in names if any(n in vars(k) for k in cls.__mro__)]
    if found:
        raise TypeError(
            f"{'scenario' if is_scenario else 'component'} class {cls.__name__!r} defines {found}, "
            f"Foundation-facing hooks that the shim and interop read only from a subclass of "
            f"jaxecon.interop.foundation_hooks.{mixin.__name__}: declare it as "
            f"class {cls.__name__}(..., {mixin.__name__})"
        )


def _nothing_to_load(sub_state, who: str, state: EnvState) -> EnvState:
    """``state`` unchanged when ``sub_state`` is ``NoState``.

    Raises:
        NotImplementedError: ``who`` keeps a sub-state but defines no loader.
    """
    if not isinstance(sub_state, NoState):
        raise NotImplementedError(f"{who} keeps a sub-state but defines no load_foundation_state")
    return state


def agent_state_fields(obj, state: EnvState) -> dict:
    """``obj.agent_state_fields(state)`` for a component or scenario with the
    mixin, else ``{}``."""
    hooks = (FoundationComponentHooks, FoundationScenarioHooks)
    return obj.agent_state_fields(state) if isinstance(obj, hooks) else {}


def planner_state_fields(obj, state: EnvState) -> dict:
    """``obj.planner_state_fields(state)`` for a component or scenario with the
    mixin, else ``{}``."""
    hooks = (FoundationComponentHooks, FoundationScenarioHooks)
    return obj.planner_state_fields(state) if isinstance(obj, hooks) else {}


def foundation_attributes(scenario) -> dict:
    """``scenario.foundation_attributes()`` with the mixin, else ``{}``."""
    return scenario.foundation_attributes() if isinstance(scenario, FoundationScenarioHooks) else {}


def foundation_class_name(scenario_cls: type) -> str:
    """Foundation's name of a scenario class: its own ``foundation_class_name``
    (not a base class's), else its ``__name__``."""
    return vars(scenario_cls).get("foundation_class_name") or scenario_cls.__name__


def load_component_state(component, ref_component, ref_env, state: EnvState) -> EnvState:
    """``component.load_foundation_state(...)`` with the mixin; else ``state``
    unchanged for a component that keeps nothing (its sub-state is ``NoState``).

    Raises:
        NotImplementedError: a component that keeps a sub-state but defines no loader.
    """
    if isinstance(component, FoundationComponentHooks):
        return component.load_foundation_state(ref_component, ref_env, state)
    return _nothing_to_load(state.components[component.name], f"component {component.name!r}", state)


def load_scenario_state(scenario, ref_env, state: EnvState) -> EnvState:
    """``scenario.load_foundation_state(ref_env, state)`` with the mixin; else
    ``state`` unchanged for a scenario that keeps nothing.

    Raises:
        NotImplementedError: a scenario that keeps a sub-state but defines no loader.
    """
    if isinstance(scenario, FoundationScenarioHooks):
        return scenario.load_foundation_state(ref_env, state)
    return _nothing_to_load(state.scenario, f"scenario {scenario.name!r}", state)
