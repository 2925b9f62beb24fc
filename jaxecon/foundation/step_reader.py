"""Foundation's step outputs read straight from the engine's output buffers.

The jitted step of an all-jitted shim environment returns ONE uint32 buffer
(``packing.WordPacking``) holding the next key data, the observations, the
rewards, ``done`` and the step info, and beside it the observed maps. The
general route unpacks them into the core's observation dicts (``{"a":
{field: [n, ...]}, "p": {...}}``) and then builds Foundation's per-agent
dicts from them (``formats.format_obs``).
Once per Python step that is a few hundred small Python operations, a
noticeable share of a step of the canonical economy. ``StepReader`` does
both at once, from a plan made once per engine: every per-agent array is a
row of one view of the buffer, every planner entry a slice of it, and the
dicts are built in Foundation's key order straight away.

It produces exactly what ``format_obs`` produces without collating (same
keys and order, types, dtypes, shapes and values; arrays are views into the
fresh buffer, which the caller owns) and handles the observation kinds of
flattened masks: per-agent arrays, scalars and ``time``, the planner's own
entries and array-valued ``p<i>`` entries. ``StepReader.for_engine``
returns None for anything else (unflattened mask dicts), which then takes
the general route.
"""

from __future__ import annotations

import jax
import numpy as np

from jaxecon.core.env import AGENTS_FIELD
from jaxecon.foundation import formats

__all__ = ["StepReader"]

_MASK = "action_mask"


def _agent_column(kind: str, v: int, lo: int, hi: int, shape: tuple, dtype: np.dtype):
    """A function of the buffer's views giving one field's entry for every
    agent, ``[agent 0's, ...]``, as ``formats._agent_column`` gives it."""
    if kind == "array":  # [n, ...]: each agent's row, a view
        return lambda views: list(views[v][lo:hi].reshape(shape))
    if kind == "time":
        if shape[1:] == (1,):
            return lambda views: [[t] for t in views[v][lo:hi].tolist()]
        n = shape[0]
        return lambda views: [[t] for t in views[v][lo:hi].reshape(n, -1)[:, 0].tolist()]
    if dtype.kind == "f":  # "scalar": numpy scalars, float64 for floats (Foundation's numbers)
        return lambda views: list(views[v][lo:hi].astype(np.float64))
    return lambda views: list(views[v][lo:hi])


def _planner_entry(kind: str, v: int, lo: int, hi: int, shape: tuple, dtype: np.dtype):
    """A function of the buffer's views giving one planner entry, as
    ``formats._planner_value`` gives it."""
    if kind == "array":
        if len(shape) == 1:
            return lambda views: views[v][lo:hi]
        return lambda views: views[v][lo:hi].reshape(shape)
    if kind == "time":
        return lambda views: [float(views[v][lo])]
    if dtype.kind == "f":  # "scalar"
        return lambda views: np.float64(views[v][lo])
    return lambda views: views[v][lo]


class StepReader:
    """Reads a step's word buffer into Foundation's outputs (see the module docstring).

    Args:
        packing: the engine's step-output ``WordPacking`` of ``{"kd", "obs",
            "rew_a", "rew_p", "done", "info"}``.
        plan: ``formats``' plan of the observations' key structure (keys in
            Foundation's order and their kinds).
        n_agents: number of mobile agents.

    Use ``for_engine`` to build one.
    """

    def __init__(self, packing, plan, n_agents: int):
        indexed = packing.treedef.unflatten(list(range(len(packing.slots))))
        slots = {}  # key path, e.g. ("obs", "a", "flat") -> WordSlot
        for keypath, i in jax.tree_util.tree_flatten_with_path(indexed)[0]:
            slots[tuple(k.key for k in keypath)] = packing.slots[i]
        self._host_views = packing.host_views
        self._agent_keys = tuple(str(i) for i in range(n_agents))

        def where(*path):
            s = slots[path]
            return s.view, s.lo, s.hi, s.shape, s.dtype

        self._kd = where("kd")[:3]
        self._rew_a = where("rew_a")[:3]
        self._rew_p = where("rew_p")[:2]
        self._done = where("done")[:2]
        self._info = tuple((p[1],) + where(*p)[:4] for p in slots if p[0] == "info")
        self._a_keys = tuple(plan.a_keys)
        self._a = tuple(_agent_column(kind, *where("obs", "a", k)) for k, kind in zip(plan.a_keys, plan.a_kinds))
        p = [(k, kind) for k, kind in zip(plan.p_keys, plan.p_kinds)] + [(_MASK, "array")]
        self._p = tuple((k, _planner_entry(kind, *where("obs", "p", k))) for k, kind in p)
        if plan.pa:  # the planner's p<i>: row i of the core's "agents" field [n, d]
            v, lo, hi, shape, dtype = where("obs", "p", AGENTS_FIELD)
            d = int(np.prod(shape[1:]))
            self._p = self._p[:-1] + tuple(
                (k, _planner_entry("array", v, lo + i * d, lo + (i + 1) * d, shape[1:], dtype))
                for i, (k, _) in enumerate(plan.pa)) + self._p[-1:]

    @classmethod
    def for_engine(cls, packing, obs_example: dict, layout, n_agents: int):
        """A reader for an engine's outputs, or None where the observations
        hold a kind it does not handle (unflattened mask dicts).

        Args:
            packing: as in the constructor.
            obs_example: the core's observations (arrays or shape structs).
            layout: the core's ``formats.ObservationLayout``.
            n_agents: number of mobile agents.
        """
        zeros = jax.tree.map(lambda s: np.zeros(s.shape, s.dtype), obs_example)
        oa, op = zeros["a"], zeros["p"]
        if isinstance(oa.get(_MASK), dict) or isinstance(op.get(_MASK), dict):
            return None
        plan = formats.step_plan(oa, op, n_agents, layout)
        if "mask" in plan.a_kinds or "mask" in plan.p_kinds or any(sub is not None for _, sub in plan.pa):
            return None
        return cls(packing, plan, n_agents)

    def read(self, bufs):
        """Foundation's outputs from fresh host copies ``bufs`` of the step's
        output arrays (``Engine.call_step``'s: the word buffer, then the maps).

        Returns:
            ``(kd, obs, rew_a, rew_p, done, info)``: the next key data (uint32,
            a copy), ``obs`` as ``formats.format_obs`` gives it uncollated,
            ``rew_a`` the mobile agents' rewards (list of Python floats),
            ``rew_p`` the planner's (Python float), ``done`` (bool), ``info``
            ``{key: numpy view}`` (the new state's ``core.step_info``).
        """
        views = self._host_views(bufs)
        v, lo, hi = self._kd
        kd = views[v][lo:hi].copy()  # (kept in the replay log: not a view of the whole buffer)
        v, lo, hi = self._rew_a
        rew_a = views[v][lo:hi].tolist()
        v, lo = self._rew_p
        rew_p = float(views[v][lo])
        v, lo = self._done
        done = bool(views[v][lo])
        info = {k: views[v][lo:hi].reshape(shape) for k, v, lo, hi, shape in self._info}
        keys = self._a_keys
        rows = zip(*[column(views) for column in self._a])
        obs = dict(zip(self._agent_keys, [dict(zip(keys, row)) for row in rows]))
        obs["p"] = {k: entry(views) for k, entry in self._p}
        return kd, obs, rew_a, rew_p, done, info
