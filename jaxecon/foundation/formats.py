"""Foundation's output formats: observation dicts, collated rewards and infos.

Follows ``BaseEnvironment._generate_observations``, ``_build_packager``,
``_package`` and ``collate_agent_obs/rew/info``
(``ai_economist/foundation/base/base_env.py``) of ai-economist 1.7.1. The
jitted core returns observations as ``{"a": {field: [n, ...]}, "p": {...}}``
whose dict order is lost (JAX sorts pytree keys); this module rebuilds
Foundation's dicts from them:

- key order: the scenario's ``world-*`` fields, ``time``, each component's
  fields in component-list order, (with ``flatten_observations``: the fields
  kept as they are, in that order, then ``flat``), the planner's per-agent
  ``p0..p{n-1}`` entries, ``action_mask`` last;
- ``time`` is a one-element list ``[t / episode_length]`` (Python float) in
  every per-agent dict and in ``"p"``; in the collated ``"a"`` dict a float64
  ``[n]`` array;
- scalars are numpy float64 (Foundation's are Python floats or float64);
- with ``collate_agent_step_and_reset_data``: ``{"a": ..., "p": ...}`` whose
  ``"a"`` arrays have the agent axis last; with ``flatten_observations`` the
  collated dict is packed as Foundation packs it (arrays that are at least
  2-d and ``time`` kept, the per-agent scalars, each ``[n]``, concatenated in
  sorted key order into ``flat`` ``[k * n]``), rewards ``{"a": float [n]
  ndarray, "p": float64}`` and info ``{"a": {}, "p": {}}``, as Foundation's
  COVID-19 scenario (the one Foundation scenario that collates) gives them.
"""

from __future__ import annotations

import jax
import numpy as np

from jaxecon import spaces
from jaxecon.core.agent_kinds import as_masks
from jaxecon.core.env import AGENTS_FIELD, flat_split

_TIME = "time"
_MASK = "action_mask"
_FLAT = "flat"


class ObservationLayout:
    """Foundation's insertion order and per-agent shapes of one core's observations.

    Found once by tracing the scenario's and components' observation hooks
    abstractly (``jax.eval_shape``; nothing is computed).

    Args:
        core: the functional environment.
        params: its ``EnvParams``.

    Attributes:
        order: ``{"a": [key, ...], "p": [...], "pa": [...]}`` unflattened keys
            (``time`` included in ``"a"`` and ``"p"``) in Foundation's order.
        shapes: ``{(group, key): per-agent shape}`` (``"a"`` and ``"pa"``
            without the agent axis).
        dtypes: ``{(group, key): dtype}``.
        mask_order: ``{"a": [subspace, ...], "p": [...]}``: the order in which the
            components make their masks (the keys of unflattened ``action_mask``
            dicts; Foundation's, e.g. ``Sell_Stone`` before ``Buy_Stone``).
    """

    def __init__(self, core, params):
        order = {"a": [], "p": [], "pa": []}
        shapes, dtypes = {}, {}
        mask_order = {"a": [], "p": []}

        def probe(state):
            sources = core.observations.sources(state, params)
            for i, (prefix, source) in enumerate(sources):
                for group, entries in source.keyed().items():
                    for k, v in entries.items():
                        key = f"{prefix}-{k}"
                        order[group].append(key)
                        shape = tuple(np.shape(v))
                        shapes[(group, key)] = shape[1:] if group in ("a", "pa") else shape
                        dtypes[(group, key)] = np.dtype(v.dtype)
                if i == 0:
                    for group in ("a", "p"):
                        order[group].append(_TIME)
                        shapes[(group, _TIME)] = (1,)
                        dtypes[(group, _TIME)] = np.dtype(np.float32)
            for c, source in zip(core.components, core.observations.mask_sources(state, params)):
                for group, entries in as_masks(source, f"component {c.name!r}").keyed().items():
                    mask_order[group].extend(entries)
            for group, layout in (("a", core.agent_actions), ("p", core.planner_actions)):
                mask_order[group].extend(n for n in layout.names if n not in mask_order[group])
            return 0

        state = jax.eval_shape(lambda k: core.init_state(k, params, 0), jax.random.key(0))
        jax.eval_shape(probe, state)
        self.order = order
        self.shapes = shapes
        self.dtypes = dtypes
        self.mask_order = mask_order
        self._plans = {}  # obs key structure -> _Plan (see format_obs)

    def flat_fields(self, group: str) -> list:
        """``[(key, per-agent shape)]`` packed into ``flat`` per agent, sorted by key
        (Foundation's packager, ``jaxecon.core.env.flat_split``)."""
        _, keys = flat_split({k: self.shapes[(group, k)] for k in self.order[group]})
        return [(k, self.shapes[(group, k)]) for k in keys]


def _scalar(a):
    """A numpy 0-d value as Foundation's scalars: float64 for floats, else the numpy scalar."""
    a = np.asarray(a)
    return np.float64(a) if a.dtype.kind == "f" else a[()]


def _value(v):
    """A fresh copy of an observation entry (0-d arrays become scalars)."""
    a = np.array(v)
    return _scalar(a) if a.ndim == 0 else a


def _time_list(v) -> list:
    """Foundation's ``time`` entry: ``[t / scale]`` as a Python float list."""
    return [float(np.asarray(v).reshape(-1)[0])]


def _masks(v, order, agent=None, collate=False):
    """An action-mask entry: flattened float32 array, or Foundation's unflattened
    ``{subspace: uint8 nested list}`` dict in ``order``."""
    if not isinstance(v, dict):
        a = np.asarray(v)
        if collate:
            return np.array(np.moveaxis(a, 0, -1))
        return np.array(a if agent is None else a[agent])
    out = {}
    for k in sorted(v, key=lambda name: order.index(name) if name in order else len(order)):
        m = v[k]
        m = np.asarray(m, np.uint8)
        if collate:
            m = np.moveaxis(m, 0, -1)
        elif agent is not None:
            m = m[agent]
        out[k] = m.tolist()
    return out


def _ordered(values: dict, order: list, flat_last: bool) -> dict:
    """``values`` in ``order``, ``flat`` last. Where ``values`` holds keys the
    core's layout does not know (fields of components or scenarios written in
    numpy, which come already in Foundation's order), their own order is kept."""
    if any(k not in order and k != _FLAT for k in values):
        out = {k: v for k, v in values.items() if k != _FLAT}
        if _FLAT in values:
            out[_FLAT] = values[_FLAT]
        return out
    out = {k: values[k] for k in order if k in values}
    if flat_last and _FLAT in values:
        out[_FLAT] = values[_FLAT]
    return out


def _ordered_keys(keys, order: list, flat_last: bool) -> list:
    """The keys of ``_ordered(dict.fromkeys(keys), order, flat_last)``, in its order."""
    return list(_ordered(dict.fromkeys(keys), order, flat_last))


class _Plan:
    """How one key structure of the core's observations becomes Foundation's
    per-agent dicts (built once per structure, see ``format_obs``).

    Args:
        oa, op: one mobile group's and one planner's observations (either
            may be None: a plan of the other only).

    Attributes:
        a_keys: the agents' keys in Foundation's order (``action_mask`` last).
        a_kinds: per key: ``"time"``, ``"scalar"`` (0-d per agent), ``"mask"``
            (unflattened masks, a dict), or ``"array"``.
        p_keys, p_kinds: the same for the planner's own entries (its view
            of the agents, ``"agents"``, and ``action_mask`` excluded); ``pa``:
            ``[(p<i>, entry keys in Foundation's order or None for an
            array)]``, one per row of the core's ``"agents"`` field.
    """

    def __init__(self, oa, op, n_agents: int, layout: ObservationLayout):
        self.a_keys, self.a_kinds, self.p_keys, self.p_kinds, self.pa = [], [], [], [], []
        if oa is not None:
            keys = _ordered_keys([k for k in oa if k != _MASK], layout.order["a"], True) + [_MASK]
            self.a_keys = keys
            self.a_kinds = [_kind(k, oa[k], 1) for k in keys]
        if op is None:
            return
        own = [k for k in op if k not in (_MASK, AGENTS_FIELD)]
        self.p_keys = _ordered_keys(own, layout.order["p"], True)
        self.p_kinds = [_kind(k, op[k], 0) for k in self.p_keys]
        if AGENTS_FIELD in op:
            v = op[AGENTS_FIELD]
            sub = _ordered_keys(v, layout.order["pa"], False) if isinstance(v, dict) else None
            self.pa = [(f"p{i}", sub) for i in range(n_agents)]


def _kind(key: str, value, agent_axes: int) -> str:
    if key == _TIME:
        return "time"
    if isinstance(value, dict):
        return "mask"
    return "scalar" if np.ndim(value) == agent_axes else "array"


def _plan(oa: dict, op: dict, n_agents: int, layout: ObservationLayout, fixed: bool) -> _Plan:
    """The cached ``_Plan`` of this key structure (with ``fixed``: of the one
    structure this layout's observations always have)."""
    if fixed:
        plan = layout._plans.get("fixed")
        if plan is None:
            plan = layout._plans["fixed"] = _Plan(oa, op, n_agents, layout)
        return plan
    sig = (tuple(oa), tuple(op), tuple(tuple(v) for v in op.values() if isinstance(v, dict)),
           isinstance(oa[_MASK], dict))
    plan = layout._plans.get(sig)
    if plan is None:
        plan = layout._plans[sig] = _Plan(oa, op, n_agents, layout)
    return plan


def _agent_column(k: str, kind: str, v, layout: ObservationLayout, n: int) -> list:
    """Entry ``k`` of every agent's dict: ``[agent 0's, ..., agent n-1's]``."""
    if kind == "array":
        return list(v)  # each agent's row (a view)
    if kind == "time":
        return [[t] for t in np.asarray(v).reshape(n, -1)[:, 0].tolist()]
    if kind == "scalar":  # as _scalar gives each: float64 for floats, else the numpy scalar
        v = np.asarray(v)
        return list(v.astype(np.float64)) if v.dtype.kind == "f" else list(v)
    return [_masks(v, layout.mask_order["a"], agent=i) for i in range(n)]


def _planner_value(kind: str, v, layout: ObservationLayout):
    if kind == "time":
        return _time_list(v)
    if kind == "scalar":
        return _scalar(v)
    if kind == "mask":
        return _masks(v, layout.mask_order["p"])
    return v


def _collated_agents(oa: dict, layout: ObservationLayout, n: int, flatten: bool) -> dict:
    """Foundation's collated ``"a"`` dict (agent axis last), packed as Foundation
    packs it when ``flatten``."""
    fields = {}
    if flatten:
        # The core packed each agent's <= 1-d fields into flat [n, F]; unpack them.
        flat = np.asarray(oa[_FLAT])
        offset = 0
        for k, shape in layout.flat_fields("a"):
            size = int(np.prod(shape, dtype=np.int64))
            fields[k] = flat[:, offset:offset + size].reshape((n,) + shape).astype(layout.dtypes[("a", k)])
            offset += size
    for k, v in oa.items():
        if k not in (_FLAT, _MASK):
            fields[k] = np.asarray(v)
    collated = {}
    for k in layout.order["a"] + [k for k in fields if k not in layout.order["a"]]:
        if k == _TIME:
            collated[k] = np.asarray(fields[k], np.float64).reshape(n)
        else:
            collated[k] = np.array(np.moveaxis(fields[k], 0, -1))
    if flatten:
        keep = [k for k, v in collated.items() if v.ndim > 1 or k == _TIME]
        packed = {k: collated[k] for k in keep}
        to_flat = sorted(k for k, v in collated.items() if v.ndim <= 1)
        if to_flat:
            packed[_FLAT] = np.concatenate([collated[k].reshape(-1) for k in to_flat]).astype(np.float32)
        collated = packed
    collated[_MASK] = _masks(oa[_MASK], layout.mask_order["a"], collate=True)
    return collated


def _agent_rows(entries, n_agents: int, row) -> dict:
    """``entries`` (a planner observation or its space, as ``(key, value)``
    pairs) with the ``"agents"`` field replaced, in place, by ``p0``..``p<n-1>``:
    ``row(value, i)``, or ``{key: row(v, i)}`` for an unflattened (mapping) value."""
    out = {}
    for k, v in entries:
        if k != AGENTS_FIELD:
            out[k] = v
            continue
        for i in range(n_agents):
            out[f"p{i}"] = ({kk: row(vv, i) for kk, vv in v.items()} if isinstance(v, (dict, spaces.Dict))
                            else row(v, i))
    return out


def planner_entries(obs_p: dict, n_agents: int) -> dict:
    """The core's planner observation with Foundation's layout: its ``"agents"``
    field (``[n, d]``, or ``{field: [n, ...]}`` unflattened) replaced, in place,
    by ``p0``..``p<n-1>`` (row i; jax or numpy arrays, not copied)."""
    return _agent_rows(obs_p.items(), n_agents, lambda v, i: v[i])


def planner_observation_space(space, n_agents: int):
    """The planner's ``jaxecon.spaces.Dict`` as Foundation lays its observation
    out: the core's ``"agents"`` field (``Box`` [n, d], or a ``Dict`` of [n, ...]
    Boxes) replaced, in place, by one entry per mobile agent, ``p0``..``p<n-1>``
    (row i's bounds; a ``Dict`` per agent when unflattened)."""

    def row(box, i):
        return spaces.Box(box.low[i], box.high[i], box.shape[1:], box.dtype)

    out = _agent_rows(space.items(), n_agents, row)
    return spaces.Dict({k: spaces.Dict(v) if isinstance(v, dict) else v for k, v in out.items()})


def format_obs(obs, layout: ObservationLayout, n_agents: int, collate: bool, flatten: bool,
               fixed: bool = False) -> dict:
    """The core's observations as Foundation's ``reset``/``step`` return them.

    Args:
        obs: ``{"a": {field: [n, ...]}, "p": {field: ...}}``: the engine's
            fresh, writable host arrays, handed over (nothing else holds
            them); any key order; unflattened action masks are
            ``{subspace: [n, size]}`` dicts.
        layout: the core's ``ObservationLayout``.
        n_agents: number of mobile agents.
        collate: Foundation's ``collate_agent_step_and_reset_data``.
        flatten: Foundation's ``flatten_observations`` (the core packed ``flat``).
        fixed: every call with this ``layout`` passes the same key structure
            (the jitted engine's outputs), so the plan is not looked up by it.
    Returns:
        ``{"0": {...}, ..., "n-1": {...}, "p": {...}}``, or ``{"a": ..., "p": ...}``
        when ``collate`` (see the module docstring for keys, order and types).
        Arrays are the handed-over memory: each agent's array is its row of
        one field, so writing into one agent's array never changes another's
        or the environment's; unflattened masks are uint8 nested lists.
    """
    oa, op = obs["a"], obs["p"]
    plan = _plan(oa, op, n_agents, layout, fixed)
    planner = _planner_dict(op, plan, layout)
    if collate:
        return {"a": _collated_agents(oa, layout, n_agents, flatten), "p": planner}
    out = _agent_dicts(oa, plan, layout, 0, n_agents)
    out["p"] = planner
    return out


def _planner_dict(op: dict, plan: _Plan, layout: ObservationLayout) -> dict:
    """One planner's observation dict (``format_obs``)."""
    planner = {k: _planner_value(kind, op[k], layout) for k, kind in zip(plan.p_keys, plan.p_kinds)}
    rows = op.get(AGENTS_FIELD)
    for i, (key, sub) in enumerate(plan.pa):
        planner[key] = rows[i] if sub is None else {kk: _value(rows[kk][i]) for kk in sub}
    planner[_MASK] = _planner_value("mask" if isinstance(op[_MASK], dict) else "array", op[_MASK], layout)
    return planner


def _agent_dicts(oa: dict, plan: _Plan, layout: ObservationLayout, start: int, count: int) -> dict:
    """``{str(start + i): agent i's observation dict}`` of one mobile group's ``oa``."""
    keys = plan.a_keys
    columns = [_agent_column(k, kind, oa[k], layout, count) for k, kind in zip(keys, plan.a_kinds)]
    return {str(start + i): dict(zip(keys, row)) for i, row in enumerate(zip(*columns))}


def format_group_obs(obs: dict, layout: ObservationLayout, core, planner_keys: list) -> dict:
    """``format_obs`` for an economy whose groups are not Foundation's (several
    mobile agent classes, no planner or several): each group's observations
    as Foundation's per-agent dicts, merged.

    Args:
        obs: ``{group: observation}`` (the jitted engine's fresh host arrays,
            handed over), every group of ``core.agent_groups``.
        layout: the core's ``ObservationLayout``.
        core: the functional environment (its ``agent_groups``, ``n_agents``).
        planner_keys: the planners' idx, one per planner group in order
            (``jaxecon.foundation.agent_classes.planner_keys``).
    Returns:
        ``{"0": {...}, ..., "n-1": {...}, <planner idx>: {...}, ...}``: each
        mobile agent's dict holds its group's keys (a class observes the
        components that act on it) in Foundation's order, each planner's the
        planner's (with ``p0``..``p<n-1>``), as ``format_obs``.
    """
    out, keys = {}, iter(planner_keys)
    for g in core.agent_groups:
        o = obs[g.name]
        plan = layout._plans.get(("group", g.name))
        if plan is None:
            plan = layout._plans[("group", g.name)] = (_Plan(None, o, core.n_agents, layout) if g.is_planner
                                            else _Plan(o, None, core.n_agents, layout))
        if g.is_planner:
            out[next(keys)] = _planner_dict(o, plan, layout)
        else:
            out.update(_agent_dicts(o, plan, layout, g.start, g.count))
    return out


def collated_rewards(reward_a, reward_p) -> dict:
    """Foundation's collated rewards: ``{"a": float [n] ndarray, "p": float64}``."""
    return {"a": np.array(np.asarray(reward_a).reshape(-1)), "p": np.float64(reward_p)}


def collated_info() -> dict:
    """Foundation's collated info, ``{"a": {}, "p": {}}``."""
    return {"a": {}, "p": {}}


def collate_agent_obs(obs: dict) -> dict:
    """Foundation's ``BaseEnvironment.collate_agent_obs``: in place, replace the
    mobile agents' entries ``"0".."n-1"`` by ``"a"``, each field stacked along
    a new last axis; a dict that already has ``"a"`` is returned as it is.

    Returns:
        ``obs`` (the same dict).
    """
    if "a" in obs:
        return obs
    n = len(obs) - 1
    obs["a"] = {k: np.stack([obs[str(i)][k] for i in range(n)], axis=-1) for k in obs["0"]}
    for i in range(n):
        del obs[str(i)]
    return obs


def collate_agent_rew(rew: dict) -> dict:
    """Foundation's ``collate_agent_rew``: in place, ``"0".."n-1"`` become
    ``"a": [r_0, ..., r_{n-1}]`` (a list); returns ``rew``."""
    if "a" in rew:
        return rew
    n = len(rew) - 1
    rew["a"] = [rew.pop(str(i)) for i in range(n)]
    return rew


def collate_agent_info(info: dict) -> dict:
    """Foundation's ``collate_agent_info``: in place, ``"0".."n-1"`` move under
    ``"a"`` as ``{"0": ..., ...}``; returns ``info``."""
    if "a" in info:
        return info
    n = len(info) - 1
    info["a"] = {str(i): info.pop(str(i)) for i in range(n)}
    return info
