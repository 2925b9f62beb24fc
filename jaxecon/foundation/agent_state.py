"""Foundation's ``agent.state`` dicts from a host-side ``EnvState``.

Follows ``BaseAgent.state`` (``ai_economist/foundation/base/base_agent.py``):
``loc``, ``inventory``, ``escrow``, ``endogenous``, then the fields that
components (``Build``'s ``build_payment``, ...) and the scenario (COVID-19's
``"Total Infected"``, ``"Date"``, ...) add. The agent views read it for the
current state, the dense log for every timestep's snapshot.
"""

from __future__ import annotations

import copy

import numpy as np

from jaxecon.dense_log import agent_state as _core_agent_state
from jaxecon.dense_log import planner_state as _core_planner_state
from jaxecon.dense_log import recursive_cast
from jaxecon.foundation.agent_classes import planner_keys
from jaxecon.interop import foundation_hooks as hooks


def state_fields(core, host) -> tuple:
    """The fields components and scenario add to Foundation's ``agent.state``, for ``host``.

    Args:
        core: the functional environment.
        host: an ``EnvState`` of numpy arrays.
    Returns:
        ``(agents, planner)``: ``agents`` ``{field: np.ndarray [n]}`` from each
        component acting on ``BasicMobileAgent`` (its ``agent_state_fields``),
        then from the scenario; ``planner`` ``{field: scalar}`` from each
        component's ``planner_state_fields``, then the scenario's. A scenario
        adds fields by overriding those two hooks of
        ``jaxecon.interop.foundation_hooks.FoundationScenarioHooks``, as
        ``CovidAndEconomySimulation`` does (Foundation's ``covid19_env.py``
        writes them into ``agent.state`` in its reset and step), so they come
        after the components' fields, as in Foundation.

        Order, as Foundation's: a component that gives an agent class actions
        (``get_n_actions`` not None) adds its fields when the agent is built
        (``BaseAgent.register_components``), the others only at the first
        reset (``BaseComponent.reset``), so their fields come after all of
        those, each group in component order.
    """
    agents, planner = {}, {}
    mobile = {g.agent_class for g in core.mobile_groups}  # Foundation's: {"BasicMobileAgent"}
    for cls, out, fields in (("BasicMobileAgent", agents, hooks.agent_state_fields),
                             ("BasicPlanner", planner, hooks.planner_state_fields)):
        comps = [c for c in core.components
                 if cls == "BasicPlanner" or set(mobile) & set(c.agent_subclasses)]
        for comp in sorted(comps, key=lambda c: c.get_n_actions(cls) is None):  # stable
            out.update(fields(comp, host))
    agents.update(hooks.agent_state_fields(core.scenario, host))
    planner.update(hooks.planner_state_fields(core.scenario, host))
    return agents, planner


def _ordered(arrays: dict, names) -> dict:
    return {k: arrays[k] for k in names}


def agent_state(core, host, idx, fields=None) -> dict:
    """Foundation's ``agent.state`` of agent ``idx`` (int, ``"0"``.. or ``"p"``) in ``host``.

    Args:
        core: the functional environment.
        host: an ``EnvState`` of numpy arrays.
        fields: ``state_fields(core, host)`` if already computed (one call
            serves every agent of a dense-log entry).
    Returns:
        Mobile agent: ``{"loc": [row, col], "inventory": {resource: float},
        "escrow": {...}, "endogenous": {name: float}, <component and scenario
        fields>}``; planner: ``{"inventory", "escrow", "endogenous": {}, ...}``.
        Resources in ``core.resources`` order; Python scalars throughout.
    """
    agents, planner = state_fields(core, host) if fields is None else fields
    if idx == "p":
        out = _core_planner_state(
            _ordered(host.planner_inventory, core.resources),
            _ordered(host.planner_escrow, core.resources),
        )
        out["endogenous"] = {}
        out.update({k: recursive_cast(np.asarray(v)) for k, v in planner.items()})
        return out
    i = int(idx)
    out = _core_agent_state(
        host.loc,
        _ordered(host.inventory, core.resources),
        _ordered(host.escrow, core.resources),
        _ordered(host.endogenous, core.endogenous),
        i,
    )
    out.update({k: recursive_cast(np.asarray(v)[i]) for k, v in agents.items()})
    return out


def all_agent_states(core, host) -> dict:
    """``{"0": agent.state, ..., "p": planner.state}`` in ``host`` (one dense-log
    ``states`` entry; several planners: each under its idx, ``"p"``, ``"p1"``,
    ..., with the state they share; none without a planner)."""
    fields = state_fields(core, host)
    out = {str(i): agent_state(core, host, i, fields) for i in range(core.n_agents)}
    if planner_keys(core):
        planner = agent_state(core, host, "p", fields)
        out.update({k: planner if j == 0 else copy.deepcopy(planner) for j, k in enumerate(planner_keys(core))})
    return out
