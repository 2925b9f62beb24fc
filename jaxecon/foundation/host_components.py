"""Foundation-style numpy components inside the jitted core: their stand-ins and formats.

A component a user wrote against Foundation's ``BaseComponent`` API
(``jaxecon.foundation.base.base_component.BaseComponent``) runs its hooks
in Python, on the host, against the shim's writable views of the state.
Inside the functional core it is represented by a ``HostComponent``: a
``Component`` with ``runs_on_host = True`` that contributes its action
subspaces (``get_n_actions``, asked of the user's object), keeps the
numeric fields of ``get_additional_state_fields`` in its typed sub-state
(``HostFieldsState``, so writes such as ``agent.state["lottery_wins"] += 1``
land in the ``EnvState``) and does nothing in the jitted reset and step:
``jaxecon.foundation.host_engine`` calls the user's hooks between the jitted
pieces, in component-list order.

Also here: the conversions between Foundation's per-agent dicts
(``{agent.idx: {key: value}}`` observations, ``{agent.idx: mask}`` masks)
and the core's batched groups (``{"a": {key: [n, ...]}, "p": {...}, "pa":
{...}}``), which the host engine hands to the core's
``assemble_observations``.
"""

from __future__ import annotations

import copy
import numbers

import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.core.component import Component
from jaxecon.interop.foundation_hooks import FoundationComponentHooks
from jaxecon.core.state import float_dtype

MOBILE = "BasicMobileAgent"
PLANNER = "BasicPlanner"

__all__ = ["HostComponent", "HostFieldsState", "batch_observations", "batch_masks", "MOBILE", "PLANNER"]


@struct.dataclass
class HostFieldsState:
    """Sub-state of a Foundation-style component: its numeric agent-state fields.

    Attributes:
        agent: ``{field: float [n]}`` for the mobile agents.
        planner: ``{field: float []}`` for the planner.
    """

    agent: dict
    planner: dict


def _is_number(v) -> bool:
    return isinstance(v, (numbers.Real, np.bool_)) and not isinstance(v, np.ndarray)


class HostComponent(Component, FoundationComponentHooks):
    """The core's stand-in for a Foundation-style component object ``host``.

    Args:
        spec: the economy's ``EnvSpec``.
        host: the user's component object (built with Foundation's signature).

    Attributes:
        host: the user's object; its hooks run on the host.
        agent_fields, planner_fields: ``{field: reset value}`` of the numeric
            ``get_additional_state_fields`` (kept in the ``EnvState``).
        agent_other, planner_other: the other (non-scalar) fields' reset
            values; they live on the host, in ``host_values``.
        host_values: ``{agent idx: {field: value}}`` of the non-scalar fields.
    """

    runs_on_host = True

    def __init__(self, spec, host):
        super().__init__(spec)
        self.host = host
        self.name = host.name
        self.component_type = host.component_type
        self.required_entities = tuple(host.required_entities)
        self.agent_subclasses = tuple(host.agent_subclasses)
        self.agent_fields, self.agent_other = self._split(MOBILE)
        self.planner_fields, self.planner_other = self._split(PLANNER)
        self.host_values = {}
        self.reset_host_values()

    def _split(self, agent_cls_name):
        fields = dict(self.host.get_additional_state_fields(agent_cls_name) or {})
        numeric = {k: v for k, v in fields.items() if _is_number(v)}
        return numeric, {k: v for k, v in fields.items() if k not in numeric}

    def reset_host_values(self) -> None:
        """Set the non-scalar fields to their reset values (deep copies)."""
        self.host_values = {str(i): copy.deepcopy(self.agent_other) for i in range(self.n_agents)}
        self.host_values["p"] = copy.deepcopy(self.planner_other)

    def get_n_actions(self, agent_cls_name):
        return self.host.get_n_actions(agent_cls_name)

    def init(self, key, params) -> HostFieldsState:
        f = float_dtype()
        return HostFieldsState(
            agent={k: jnp.full(self.n_agents, float(v), f) for k, v in self.agent_fields.items()},
            planner={k: jnp.full((), float(v), f) for k, v in self.planner_fields.items()},
        )

    @staticmethod
    def _typed(values: np.ndarray, default):
        """Stored floats as Foundation's values: ints for int fields while integral, bools for bool fields."""
        out = np.empty(values.shape, dtype=object)
        for j, x in np.ndenumerate(values):
            x = float(x)
            if isinstance(default, (bool, np.bool_)):
                out[j] = bool(x)
            elif isinstance(default, numbers.Integral) and x.is_integer():
                out[j] = int(x)
            else:
                out[j] = x
        return out

    def agent_state_fields(self, state) -> dict:
        sub = self.sub_state(state)
        out = {k: self._typed(np.asarray(sub.agent[k]), d) for k, d in self.agent_fields.items()}
        for k in self.agent_other:
            values = np.empty(self.n_agents, dtype=object)
            for i in range(self.n_agents):
                values[i] = self.host_values[str(i)][k]
            out[k] = values
        return out

    def load_foundation_state(self, ref_component, ref_env, state):
        """The numeric state fields copied from the reference agents' ``state``
        dicts (and the non-scalar ones into ``host_values``); the user's
        object keeps its own attributes (both start from their reset values)."""
        f = float_dtype()
        agents = list(ref_env.world.agents)
        sub = HostFieldsState(
            agent={k: jnp.asarray([float(a.state[k]) for a in agents], f) for k in self.agent_fields},
            planner={k: jnp.asarray(float(ref_env.world.planner.state[k]), f) for k in self.planner_fields},
        )
        for a in agents:
            self.host_values[str(a.idx)].update({k: copy.deepcopy(a.state[k]) for k in self.agent_other})
        self.host_values["p"].update({k: copy.deepcopy(ref_env.world.planner.state[k]) for k in self.planner_other})
        return self.with_sub_state(state, sub)

    def planner_state_fields(self, state) -> dict:
        sub = self.sub_state(state)
        out = {k: self._typed(np.asarray(sub.planner[k]), d)[()] for k, d in self.planner_fields.items()}
        out.update({k: self.host_values["p"][k] for k in self.planner_other})
        return out


# --------------------------------------------------------------- formats
def _agent_groups(n_agents: int):
    mobile = [str(i) for i in range(n_agents)]
    pa = {f"p{i}": i for i in range(n_agents)}
    return mobile, pa


def batch_observations(obs: dict, n_agents: int, who: str) -> dict:
    """Foundation's ``{agent idx: {key: value}}`` observations as core groups.

    Args:
        obs: a ``generate_observations()`` result (keys ints or strings:
            ``0..n-1``, ``"p"``, and the planner's per-agent ``"p0".."p{n-1}"``).
        n_agents: number of mobile agents.
        who: the component or scenario name, for error messages.
    Returns:
        ``{"a": {key: [n, ...]}, "p": {key: ...}, "pa": {key: [n, ...]}}`` of
        numpy arrays (mobile agents stacked along axis 0).
    Raises:
        ValueError: an unknown agent key, or mobile agents (or planner
            entries) that do not all have the same keys and shapes.
    """
    obs = {str(k): v for k, v in (obs or {}).items()}
    mobile, pa = _agent_groups(n_agents)
    out = {"a": {}, "p": {}, "pa": {}}
    unknown = sorted(set(obs) - set(mobile) - set(pa) - {"p"})
    if unknown:
        raise ValueError(f"{who}: observations for unknown agents {unknown}")
    for group, keys in (("a", mobile), ("pa", list(pa))):
        present = [k for k in keys if k in obs]
        if not present:
            continue
        if len(present) != len(keys):
            raise ValueError(
                f"{who}: observations must cover every mobile agent or none "
                f"(got {present}); jaxecon batches them over agents"
            )
        fields = list(obs[present[0]])
        for k in present:
            if list(obs[k]) != fields:
                raise ValueError(f"{who}: agent {k} has observation keys {list(obs[k])}, agent "
                                 f"{present[0]} has {fields}")
        for f in fields:
            try:
                out[group][f] = np.stack([np.asarray(obs[k][f]) for k in keys])
            except ValueError:
                raise ValueError(f"{who}: observation {f!r} has different shapes across agents") from None
    if "p" in obs:
        out["p"] = {f: np.asarray(v) for f, v in obs["p"].items()}
    return out


def batch_masks(masks: dict, component: HostComponent, agent_layout, planner_layout) -> dict:
    """Foundation's ``generate_masks()`` result as core mask groups.

    Args:
        masks: ``{agent idx: mask}``; a mask is an array of the subspace's size
            (one subspace) or ``{sub-action name: array}`` (several).
        component: the component's stand-in (its name, agent count).
        agent_layout, planner_layout: the core's ``ActionLayout`` s.
    Returns:
        ``{"a": {subspace: bool [n, size]}, "p": {subspace: bool [size]}}`` for
        this component's subspaces; agents without a mask get all ones.
    """
    masks = {str(k): v for k, v in (masks or {}).items()}
    name, n = component.name, component.n_agents
    out = {"a": {}, "p": {}}

    def entries(m):
        if isinstance(m, dict):
            return {f"{name}.{k}": v for k, v in m.items()}
        return {name: m}

    for group, layout, keys in (("a", agent_layout, [str(i) for i in range(n)]), ("p", planner_layout, ["p"])):
        sizes = {s: k for s, k in zip(layout.names, layout.sizes) if s.split(".")[0] == name}
        if not sizes:
            continue
        per_agent = [entries(masks[k]) if k in masks else {} for k in keys]
        for sub, size in sizes.items():
            rows = []
            for e in per_agent:
                m = np.ones(size, bool) if sub not in e else np.asarray(e[sub]).astype(bool).reshape(-1)
                if m.shape != (size,):
                    raise ValueError(f"{name}: mask for {sub!r} has {m.size} entries, expected {size}")
                rows.append(m)
            out[group][sub] = np.stack(rows) if group == "a" else rows[0]
    return out
