"""The Component protocol: a building block of an economy, as pure functions.

Mirrors ``ai_economist/foundation/base/base_component.py``. A component is a
small object built by ``jaxecon.make`` from its Foundation keyword arguments;
it holds only static configuration and exposes pure functions over
``EnvState``. To write your own, subclass ``Component`` in one file, register
it with ``@jaxecon.component_registry.add`` (or ``foundation.components.add``) and
implement the methods below; the defaults do nothing.

Per step the environment calls, in component-list order, ``step`` with the
component's own decoded actions; after all components and the scenario step,
``observe`` and ``masks`` build observations and action masks.

Every hook is declared here; the environment calls each on every component
(nothing is looked up with ``getattr``). jaxecon's hooks and the Foundation
hooks they implement (``FOUNDATION_HOOKS``):

=========================  ==============================================
jaxecon ``Component``      Foundation ``BaseComponent``
=========================  ==============================================
``__init__(spec, **kw)``   ``__init__(world, episode_length, **kw)``
``get_n_actions``          ``get_n_actions``
``init``                   (no equivalent: the sub-state's shapes)
``reset``                  ``additional_reset_steps``
``carry_over``             (implicit: attributes that outlive ``reset``)
``step``                   ``component_step``
``observe``                ``generate_observations``
``observation_spaces``     (no equivalent: the spaces of ``observe``)
``masks``                  ``generate_masks``
``metrics``                ``get_metrics``
``dense_log_entry``        ``get_dense_log`` (one step's entry)
``unread_params``          (no equivalent: analysis's leaf check)
=========================  ==============================================

Foundation-style components (numpy classes written against Foundation's
``BaseComponent`` API, subclassing ``jaxecon.foundation.base.base_component.
BaseComponent``) register in the same registry: ``validate_component_class``
accepts both kinds. The functional API cannot run them (their hooks are
Python on the host); the stateful shim builds them into an economy through
their class's ``build_core_component`` (a ``Component`` with
``runs_on_host = True`` standing in for them in the jitted core).
"""

from __future__ import annotations

from typing import Any

import jax
from flax import struct

from jaxecon.core.agent_kinds import Observed, PerKind
from jaxecon.core.spec import EnvSpec
from jaxecon.core.state import EnvState, NoState, SubState


#: jaxecon hook -> the Foundation ``BaseComponent`` hook it implements (None: jaxecon only).
FOUNDATION_HOOKS: dict = {
    "__init__": "__init__",
    "get_n_actions": "get_n_actions",
    "init": None,
    "reset": "additional_reset_steps",
    "carry_over": None,
    "step": "component_step",
    "observe": "generate_observations",
    "observation_spaces": None,
    "masks": "generate_masks",
    "metrics": "get_metrics",
    "dense_log_entry": "get_dense_log",
    "unread_params": None,
}


#: The hooks a Foundation-style component class must have (Foundation's
#: ``BaseComponent`` abstract methods), plus how the shim builds it.
FOUNDATION_COMPONENT_HOOKS: tuple = (
    "get_n_actions", "get_additional_state_fields", "component_step",
    "generate_observations", "generate_masks",
)


def validate_component_class(cls) -> None:
    """Check that ``cls`` can be registered as a component.

    Accepted: a subclass of ``Component`` (a jaxecon component), or a
    Foundation-style component: a class with Foundation's hooks
    (``FOUNDATION_COMPONENT_HOOKS``) and ``build_core_component`` (what
    ``jaxecon.foundation.base.base_component.BaseComponent`` provides).

    The component registry's extra check, installed by ``jaxecon.registries``,
    then refuses a jaxecon component that defines a Foundation-facing hook
    without its mixin (``jaxecon.interop.foundation_hooks.check_declared``).

    Raises:
        TypeError: anything else, naming what it lacks; a subclass of
            ai-economist's own ``BaseComponent`` is told to change the import.
    """
    if issubclass(cls, Component):
        return
    if any(k.__module__.split(".")[0] == "ai_economist" for k in cls.__mro__):
        raise TypeError(
            f"component class {cls.__name__!r} subclasses ai_economist's BaseComponent; "
            "write it against jaxecon's: from jaxecon.foundation.base.base_component "
            "import BaseComponent"
        )
    missing = [h for h in FOUNDATION_COMPONENT_HOOKS + ("build_core_component",)
               if not callable(getattr(cls, h, None))]
    if missing:
        raise TypeError(
            f"component class {cls.__name__!r} is neither a jaxecon component (a subclass of "
            "jaxecon.core.component.Component) nor a Foundation-style one (a subclass of "
            "jaxecon.foundation.base.base_component.BaseComponent implementing "
            f"{', '.join(FOUNDATION_COMPONENT_HOOKS)}); it lacks: {', '.join(missing)}"
        )


@struct.dataclass
class NoParams:
    """Parameter dataclass of a component without numeric parameters."""


class Component:
    """Base class of components.

    Class attributes (as in Foundation):
        name: registry name, e.g. ``"Gather"``.
        component_type: shorthand used in metric and dense-log keys (``None`` -> name).
        required_entities: resources/landmarks/endogenous it needs.
        agent_subclasses: agent kinds it acts on (``BasicMobileAgent``, ``BasicPlanner``).
        Params: flax dataclass of its numeric parameters (defaults = Foundation's);
            a field declares its allowed values with ``jaxecon.core.bounds.bounded``
            and the constructor checks its keyword against ``bound_of(Params, field)``.
        runs_on_host: False for jaxecon components. True only for the stand-in
            of a Foundation-style numpy component inside the stateful shim
            (its hooks run on the host between jitted calls); the functional
            API refuses an economy that has one.

    Args:
        spec: the economy's frozen ``EnvSpec`` (``n_agents``, ``world_size``,
            ``episode_length``, ``inv_scale``, ``resources``, ``collectible``,
            ``map_keys``, the scenario's ``static_spec()`` as ``spec.scenario``, ...).
            Foundation passes the live world and env instead.
        **kwargs: Foundation's keyword arguments of this component. Unknown
            ones raise ``TypeError``; bad values raise ``ValueError``.
    """

    name: str = ""
    component_type: str | None = None
    required_entities: tuple = ()
    agent_subclasses: tuple = ()
    #: Whether ``reset`` draws a per-agent skill from a ``skill_dist`` keyword
    #: argument (through ``jaxecon.core.groups.sample_skills``, so that a
    #: mobile-agent group may draw from its own distribution).
    draws_skills: bool = False
    Params: type = NoParams
    runs_on_host: bool = False

    def __init__(self, spec: EnvSpec):
        self.spec = spec
        self.n_agents = spec.n_agents
        self.world_size = tuple(spec.world_size)
        self.episode_length = spec.episode_length
        self.inv_scale = spec.inv_scale

    # ----- static structure -------------------------------------------------
    @property
    def shorthand(self) -> str:
        """Key prefix of metrics and dense logs (Foundation's ``shorthand``)."""
        return self.component_type or self.name

    def default_params(self):
        """This component's ``Params`` with the values given at construction."""
        return self.Params()

    def acts_on(self, group) -> bool:
        """Whether this component takes actions from, and masks the actions of,
        ``group`` (a ``jaxecon.core.groups.AgentGroup``): the group's agent class
        (``group.agent_class``, by name, as Foundation matches them) is one of
        ``agent_subclasses`` and, for a mobile-agent type or a
        planner declared with its own ``components``, this component is among them."""
        return group.agent_class in self.agent_subclasses and group.takes_actions_of(self.name)

    def get_n_actions(self, agent_cls_name: str):
        """Actions for an agent kind: ``None``/0, an int n, or a list of (sub_name, n)."""
        return None

    def unread_params(self) -> tuple:
        """Names of ``Params`` fields this configuration never reads (e.g. the
        fixed rates under a learned tax model); analysis refuses gradients
        with respect to them. Default: none."""
        return ()

    # ----- the component's sub-state ---------------------------------------
    def sub_state(self, state: EnvState) -> SubState:
        """This component's sub-state, ``state.components[self.name]``."""
        return state.components[self.name]

    def with_sub_state(self, state: EnvState, sub: SubState, **fields) -> EnvState:
        """``state`` with this component's sub-state replaced by ``sub`` (and the
        ``EnvState`` ``fields`` given, e.g. ``inventory=...``)."""
        return state.replace(components={**state.components, self.name: sub}, **fields)

    # ----- pure functions ---------------------------------------------------
    def init(self, key: jax.Array, params) -> SubState:
        """The component's typed sub-state with the right shapes (values before reset)."""
        return NoState()

    def reset(self, key: jax.Array, state: EnvState, params) -> EnvState:
        """Restore defaults at episode start (``additional_reset_steps``); may touch any field."""
        return state

    def carry_over(self, prev_state: EnvState, state: EnvState, params) -> EnvState:
        """After ``reset``: keep what Foundation keeps across episodes (default: nothing)."""
        return state

    def step(self, key: jax.Array, state: EnvState, actions: dict, params) -> EnvState:
        """Apply one step (``component_step``).

        Args:
            actions: ``PerKind(mobile={subspace name: int32 [n]}, planner={subspace
                name: int32 []})`` (``jaxecon.core.agent_kinds``), local actions
                (0 = NO-OP), only this component's subspaces.
        """
        return state

    def observe(self, state: EnvState, params) -> Observed:
        """Observations, unprefixed: ``Observed(mobile={k: [n, ...]}, planner={k:
        [...]}, planner_view={k: [n, ...]})`` (``jaxecon.core.agent_kinds``).

        ``planner_view`` entries are the planner's per-agent ``p<i>``
        observations. The environment prefixes every key with
        ``"<ComponentName>-"``.
        """
        return Observed()

    def observation_spaces(self) -> Observed | None:
        """The spaces of ``observe``'s fields, from static configuration.

        Returns an ``Observed`` of ``{k: Box}``: the same kinds and unprefixed
        keys as ``observe``, each ``Box`` (``jaxecon.spaces``) describing ONE
        agent's entry (no leading n_agents axis for ``mobile`` and
        ``planner_view``) with ``observe``'s exact
        dtype and bounds that hold for every reachable state (``-inf``/``inf``
        where none does). Bounds that depend on a ``Params`` field are taken
        from ``default_params()`` (the values given at construction); the
        docstring of each component says which.

        Default ``None`` (undeclared): the environment infers shapes and
        dtypes with ``jax.eval_shape`` of ``observe`` and leaves the bounds
        infinite. A stand-in for a Foundation-style component
        (``runs_on_host``) has no spaces.
        """
        return None

    def masks(self, state: EnvState, params) -> PerKind:
        """Action masks: ``PerKind(mobile={subspace name: bool [n, size]}, planner={name:
        bool [size]})`` (``jaxecon.core.agent_kinds``); a subspace without one is all ones."""
        return PerKind()

    def metrics(self, state: EnvState, params) -> dict:
        """Episode metrics, unprefixed (the env adds ``"<shorthand>/"``): ``{key: scalar}``;
        a per-agent quantity once, as an array [n] under a key holding ``"{i}"``
        where Foundation writes the agent's index (``jaxecon.core.metric_keys``)."""
        return {}

    def dense_log_entry(self, prev_state: EnvState, state: EnvState) -> Any:
        """Host-side: this step's dense-log entry (Python lists/dicts), or ``None`` for no log."""
        return None
