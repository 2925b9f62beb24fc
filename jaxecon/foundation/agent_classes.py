"""The shim's agents of an economy's groups: Foundation's agent classes and idx.

Foundation's ``BaseEnvironment`` builds its agents from the scenario's
``agent_subclasses`` (``ai_economist/foundation/base/base_env.py``): each
mobile agent is an object of its registered class, numbered ``0..n-1``, and
the planner is ``"p"``. jaxecon's economy keys everything by group
(``jaxecon.core.groups``): one group per mobile agent class (``n_agents_per_class``)
or Foundation's one group ``"a"``, and zero, one or several planners
(``n_planners``, ``planner_groups``). This module maps the groups back onto
Foundation's agents:

- mobile agent ``i`` is an object of its group's registered class (a
  ``Trader`` registered with ``@foundation.agents.add``), keeps Foundation's
  idx ``i`` (classes in the order the scenario lists them) and its group's
  action layout (its ``action_spaces``, ``get_random_action`` and action
  indices are its class's own, as in Foundation);
- the planners' idx are ``"p"``, ``"p1"``, ``"p2"``, ... in declared order
  (``planner_keys``; an economy without a planner has none).
"""

from __future__ import annotations

from jaxecon.core.groups import MOBILE, MOBILE_GROUP, PLANNER
from jaxecon.core.registry import agent_registry
from jaxecon.dense_log import decode_actions
from jaxecon.foundation.agent_views import BaseAgent, BasicMobileAgent, BasicPlanner

__all__ = ["build_agents", "check_shim_groups", "dense_log_actions", "group_keys", "planner_keys", "view_class"]

_VIEWS: dict = {}  # functional agent class -> its shim view class (view_class)


def planner_keys(core) -> list:
    """The planners' idx, one per planner group in declared order: ``["p"]``
    (Foundation's one planner), ``["p", "p1", ...]`` (several), ``[]`` (none)."""
    n = len(core.planner_groups)
    return ["p"] + [f"p{j}" for j in range(1, n)] if n else []


def view_class(agent_class: str) -> type:
    """The class the shim instantiates for the registered agent class ``agent_class``.

    A class written against the shim's ``BaseAgent`` (``BasicMobileAgent``,
    ``BasicPlanner`` or a user's subclass, e.g. ``Trader(BasicMobileAgent)``)
    is itself; a functional-API class (a subclass of ``jaxecon.entities``'
    ``BasicMobileAgent``) gets a view class of its name that subclasses both
    (built once); Foundation's two classes are the shim's.

    Raises:
        KeyError: ``agent_class`` is not registered (the registry's message).
    """
    cls = agent_registry.get(agent_class)
    if isinstance(cls, type) and issubclass(cls, BaseAgent):
        return cls
    if agent_class == PLANNER:
        return BasicPlanner
    if cls.name == BasicMobileAgent.name:
        return BasicMobileAgent
    view = _VIEWS.get(cls)
    if view is None:
        view = _VIEWS[cls] = type(cls.__name__, (BasicMobileAgent, cls), {
            "name": cls.name, "__module__": cls.__module__,
            "__doc__": f"The shim's view of the agent class {cls.name!r} (``jaxecon.foundation.agent_classes``)."})
    return view


def group_keys(core) -> list:
    """``[(group, [idx, ...]), ...]``: each ``AgentGroup`` of ``core``, in
    order, with its agents' idx as strings (mobile ``"0"``.., a planner its
    ``planner_keys`` entry)."""
    out, planners = [], iter(planner_keys(core))
    for g in core.agent_groups:
        out.append((g, [next(planners)] if g.is_planner else [str(i) for i in range(g.start, g.stop)]))
    return out


def check_shim_groups(core, on_host: bool) -> None:
    """Refuse what the shim does not run for an economy whose groups are not
    Foundation's (agent classes, no planner or several planners).

    Raises:
        ValueError: mobile-agent types declared with ``mobile_agent_groups``
            (jaxecon's: a type is no agent class, so Foundation's agents have
            no word for it; agent classes, ``n_agents_per_class``, are), hooks
            or components written in numpy (``on_host``: they index
            Foundation's ``"0".."n-1"``, ``"p"`` agents), or
            ``collate_agent_step_and_reset_data`` (its ``"a"`` stacks agents
            that share one observation layout).
    """
    groups = [g.name for g in core.agent_groups]
    types = [g.name for g in core.mobile_groups if not _is_class_group(g)]
    if types:
        raise ValueError(f"the Foundation shim runs Foundation's agents: agent classes (agent_subclasses, "
                         f"n_agents_per_class) and planners (n_planners, planner_groups); mobile_agent_groups "
                         f"{types} are jaxecon's mobile-agent types: run them with jaxecon.make and its fronts "
                         "(GymnaxEnv, MultiAgentEnv, the trainer)")
    if on_host:
        raise ValueError(f"this economy's agent groups {groups} (agent classes, n_planners, planner_groups) run "
                         "jitted only: its components and scenario hooks must be jaxecon's, not Foundation-style "
                         "numpy ones")
    if core.collate_agent_step_and_reset_data:
        raise ValueError(f"collate_agent_step_and_reset_data=True needs one mobile agent class and one planner; "
                         f"this economy's groups are {groups}: leave it False")


def _is_class_group(g) -> bool:
    """Whether the mobile group ``g`` is Foundation's one group or an agent
    class's (``n_agents_per_class``: named after its class, every component
    acting on the class, no type-specific skills or rewards)."""
    plain = g.components is None and not g.skill_dist and not g.reward
    return plain and (g.name == g.agent_class or (g.name == MOBILE_GROUP and g.agent_class == MOBILE))


def build_agents(env, core) -> tuple:
    """``(mobile agents, planners)`` of ``env``: lists of agent objects (module docstring).

    Args:
        env: the ``FoundationEnv`` the agents read their state from.
        core: its functional environment (groups, action layouts).
    Returns:
        The mobile agents by idx ``0..n-1`` (each of its group's class, with
        its group's ``ActionLayout``), then the planners in ``planner_keys`` order.
    """
    mobile, planners = [], []
    for g, keys in group_keys(core):
        cls, layout = view_class(g.agent_class), core.group_actions[g.name]
        if g.is_planner:
            planners.append(cls(env, keys[0], layout))
        else:
            mobile.extend(cls(env, int(k), layout) for k in keys)
    return mobile, planners


def dense_log_actions(core, actions: dict) -> dict:
    """One dense-log ``actions`` entry: ``{idx: {subspace: local action}}`` of
    every agent's non-NO-OP actions (``jaxecon.dense_log.decode_actions``),
    each decoded with its group's layout.

    Args:
        core: the functional environment.
        actions: ``{group: int array}``, the step's actions (``Engine.unpack_actions``).
    """
    out = {}
    for g, keys in group_keys(core):
        layout = core.group_actions[g.name]
        if g.is_planner:
            out[keys[0]] = decode_actions(layout, actions[g.name])
        else:
            out.update({k: decode_actions(layout, a) for k, a in zip(keys, actions[g.name])})
    return out
