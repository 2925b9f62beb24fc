"""Writable ``agent.state`` dicts: Foundation's in-place writes land in the ``EnvState``.

Foundation's components and scenarios change the economy by writing into
agent dicts: ``agent.state["inventory"]["Coin"] -= price``,
``agent.state["lottery_wins"] += 1``, ``agent.state["inventory"] = {...}``.
``live_agent_state(env, idx)`` returns Foundation's ``agent.state`` dict
(``jaxecon.foundation.agent_state``) as a ``LiveDict``: a real ``dict``
holding the current values (so printing, ``==``, ``json`` and ``copy`` see
plain data) whose item assignment also writes the value into the
environment's host copy of the state (``FoundationEnv._host()``), which is
sent back to the device before the next jitted call.

Writable: ``loc`` (``[row, col]``, mobile agents), every entry of
``inventory``, ``escrow`` and ``endogenous`` (or the whole dict at once),
the fields of Foundation-style components (``get_additional_state_fields``)
and new keys (kept on the host, shown in later ``agent.state`` reads).
Fields computed by jaxecon's components or scenario (``build_payment``,
COVID-19's ``"Total Infected"``, ...) are read-only (``TypeError``).

A dict is a snapshot taken when ``agent.state`` was read: read it again
after a step (as ``agent.state[...]`` in a hook always does).
"""

from __future__ import annotations

import copy

from jaxecon.foundation.agent_state import agent_state

__all__ = ["LiveDict", "live_agent_state"]

_QUANTITIES = ("inventory", "escrow", "endogenous")


class LiveDict(dict):
    """A ``dict`` whose ``d[k] = v`` (and ``update``, ``setdefault``) also calls
    ``write(k, v)``; copies and pickles are plain dicts."""

    __slots__ = ("_write",)

    def __init__(self, data: dict, write):
        super().__init__(data)
        self._write = write

    def __setitem__(self, key, value):
        self._write(key, value)
        dict.__setitem__(self, key, value)

    def update(self, *args, **kwargs):
        for k, v in dict(*args, **kwargs).items():
            self[k] = v

    def setdefault(self, key, default=None):
        if key not in self:
            self[key] = default
        return self[key]

    def __delitem__(self, key):
        raise TypeError(f"agent state entry {key!r} cannot be deleted")

    def pop(self, *args):
        raise TypeError("agent state entries cannot be removed")

    def popitem(self):
        raise TypeError("agent state entries cannot be removed")

    def clear(self):
        raise TypeError("agent state entries cannot be removed")

    def __copy__(self):
        return dict(self)

    def __deepcopy__(self, memo):
        return copy.deepcopy(dict(self), memo)

    def __reduce__(self):
        return (dict, (dict(self),))


class _Writer:
    """Writes one agent's ``agent.state`` entries into the env's host state."""

    def __init__(self, env, idx):
        self.env = env
        self.idx = idx
        self.i = None if idx == "p" else int(idx)

    def _host(self):
        return self.env._host()

    def quantity(self, kind: str, name, value) -> None:
        host = self._host()
        if self.i is None:
            arrays = {"inventory": host.planner_inventory, "escrow": host.planner_escrow}.get(kind)
            if arrays is None:
                raise TypeError("the planner has no endogenous quantities")
        else:
            arrays = getattr(host, kind)
        if name not in arrays:
            raise KeyError(f"no {kind} entry {name!r}; entries: {sorted(arrays)}")
        arr = arrays[name]
        if self.i is None:
            arr[()] = value
        else:
            arr[self.i] = value
        self.env._host_written()

    def entry(self, key, value) -> None:
        env = self.env
        if key in _QUANTITIES:
            if not isinstance(value, dict):
                raise TypeError(f"agent.state[{key!r}] must be set to a dict, got {type(value).__name__}")
            for name, v in value.items():
                self.quantity(key, name, v)
            return
        if key == "loc":
            if self.i is None:
                raise TypeError("the planner has no location")
            r, c = (int(x) for x in value)
            self._host().loc[self.i] = (r, c)
            env._host_written()
            return
        for comp in env._core.components:
            if not comp.runs_on_host:
                continue
            fields = comp.planner_fields if self.i is None else comp.agent_fields
            if key in fields:
                arr = self._host().components[comp.name]
                arr = arr.planner[key] if self.i is None else arr.agent[key]
                if self.i is None:
                    arr[()] = float(value)
                else:
                    arr[self.i] = float(value)
                env._host_written()
                return
            other = comp.planner_other if self.i is None else comp.agent_other
            if key in other:
                comp.host_values[str(self.idx)][key] = value
                return
        if key in fixed_state_keys(env._core, self._host(), self.idx):
            raise TypeError(
                f"agent.state[{key!r}] is computed by jaxecon's components or scenario and is read-only"
            )
        env._extra_state_fields.setdefault(str(self.idx), {})[key] = value


def live_agent_state(env, idx) -> LiveDict:
    """Foundation's ``agent.state`` of agent ``idx`` (int, ``"0"``.. or ``"p"``) as a ``LiveDict``.

    Args:
        env: the ``FoundationEnv``.
        idx: the agent's index.
    Returns:
        The dict of ``jaxecon.foundation.agent_state.agent_state`` with
        ``inventory``, ``escrow`` and ``endogenous`` as ``LiveDict`` s, the
        host-side values of Foundation-style components' non-scalar fields
        (the objects themselves, so in-place changes stick) and keys added by
        writes.
    """
    writer = _Writer(env, idx)
    d = agent_state(env._core, env._host(), idx)
    for kind in _QUANTITIES:
        if kind in d:
            d[kind] = LiveDict(d[kind], lambda name, v, kind=kind: writer.quantity(kind, name, v))
    key = str(idx)
    for comp in env._core.components:
        if comp.runs_on_host:
            d.update(comp.host_values.get(key, {}))
    d.update(env._extra_state_fields.get(key, {}))
    return LiveDict(d, writer.entry)


def fixed_state_keys(core, host, idx) -> set:
    """Keys of ``agent.state`` computed by jaxecon's (jitted) components and scenario."""
    d = agent_state(core, host, idx)
    hosted = set()
    for comp in core.components:
        if comp.runs_on_host:
            hosted |= set(comp.planner_fields if idx == "p" else comp.agent_fields)
    return set(d) - hosted - set(_QUANTITIES) - {"loc"}

