"""Reading a Foundation-style dense log into arrays for the plots.

A dense log (``jaxecon.dense_log``; Foundation's ``env.previous_episode_dense_log``
and the shim's, ``dense_log.json`` of ``jaxecon run``) is a dict of lists:

- ``"world"``: T + 1 entries (timesteps 0..T), a world snapshot
  (``{map name: [[...]], "House": {"owner", "health"}}``) every
  ``world_dense_log_frequency`` timesteps and at the end, ``{}`` in between;
- ``"states"``: T + 1 entries ``{"0": agent state, ..., "p": planner state}``,
  an agent state holding ``"loc"`` ``[row, col]``, ``"inventory"``,
  ``"escrow"``, ``"endogenous"`` (``{name: float}``);
- ``"actions"``, ``"rewards"``: T entries (steps 1..T);
- one list of T entries per component that logs (step t's entry at index
  t - 1), under the component's shorthand: ``"Trade"`` (the executed trades
  of each step, Foundation's ``ContinuousDoubleAuction``), ``"PeriodicTax"``
  (``[]`` except on tax days: ``{"schedule", "cutoffs", "0": {"income",
  "tax_paid", "marginal_rate", "effective_rate", "lump_sum"}, ...}``),
  ``"Build"``, ``"Gather"``.

``jaxecon run`` adds ``"env_index"``, ``"episode"`` and ``"episode_length"``;
where a log lacks them (Foundation's own), env index and episode are None.
"""

from __future__ import annotations

import json
import os

import numpy as np

__all__ = [
    "agent_series",
    "check_dense_log",
    "check_steps",
    "load_dense_log",
    "n_agents",
    "snapshot_timesteps",
    "tax_days",
    "trades_by_commodity",
]


def load_dense_log(path) -> dict:
    """Read a dense log from a JSON file (``dense_log.json`` of ``jaxecon run``).

    Returns:
        The checked log (:func:`check_dense_log`).

    Raises:
        ValueError: the file is missing, is not JSON, or is not a dense log.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ValueError(f"dense log file {path!r} does not exist")
    try:
        with open(path) as f:
            log = json.load(f)
    except json.JSONDecodeError as exc:
        raise ValueError(f"dense log file {path!r} is not JSON: {exc}") from None
    return check_dense_log(log)


def check_dense_log(dense_log) -> dict:
    """``dense_log`` itself, after checking that the plots can read it.

    Raises:
        ValueError: naming the problem: not a dict, no ``"states"`` /
            ``"world"`` list, lists of different lengths, a state without
            agent ``"0"`` or its ``"loc"``/``"inventory"``, no world snapshot,
            or what :func:`check_steps` refuses.
    """
    if not isinstance(dense_log, dict):
        raise ValueError(f"dense_log must be a dict (a Foundation-style dense log), got {type(dense_log).__name__}")
    for key in ("world", "states"):
        entries = dense_log.get(key)
        if not isinstance(entries, list) or not entries:
            got = (f"its keys are {sorted(map(str, dense_log))}" if entries is None
                   else f"got {'an empty list' if isinstance(entries, list) else type(entries).__name__}")
            raise ValueError(f"dense_log[{key!r}] must be a non-empty list (one entry per timestep 0..T), {got}")
    if len(dense_log["world"]) != len(dense_log["states"]):
        raise ValueError(f"dense_log['world'] has {len(dense_log['world'])} entries but dense_log['states'] "
                         f"{len(dense_log['states'])}; both need one per timestep 0..T")
    first = dense_log["states"][0]
    if not isinstance(first, dict) or "0" not in first:
        raise ValueError("dense_log['states'][0] must be a dict keyed by agent index ('0', '1', ..., 'p')")
    for field in ("loc", "inventory"):
        if field not in first["0"]:
            raise ValueError(f"dense_log['states'][0]['0'] has no {field!r}; its fields are {sorted(first['0'])}")
    if not any(dense_log["world"]):
        raise ValueError("dense_log['world'] holds no world snapshot (every entry is empty)")
    check_steps(dense_log)
    return dense_log


def check_steps(dense_log) -> list:
    """Check the per-timestep entries of ``dense_log`` (a dict with a non-empty
    ``"states"`` list): every state a dict holding the same agents, each
    agent's and the planner's state a dict whose ``"loc"`` is ``[row, col]``
    and whose ``"inventory"``, ``"escrow"``, ``"endogenous"`` are dicts;
    ``"actions"`` and ``"rewards"``, where present, T dicts for T + 1 states.
    Agents may be keyed by int (an in-memory log) or str (JSON).

    Returns:
        The agent keys as strs, ``["0", ..., "n-1"]``.
    Raises:
        ValueError: one line naming the field (``dense_log['states'][3]['1']['loc']``, ...),
            what it must be and what it is.
    """
    states = dense_log["states"]
    T = len(states) - 1
    agents = None
    for t, state in enumerate(states):
        if not isinstance(state, dict) or not ("0" in state or 0 in state):
            raise ValueError(f"dense_log['states'][{t}] must be a dict keyed by agent index ('0', '1', ..., 'p')")
        here = sorted((str(k) for k in state if str(k).isdigit()), key=int)
        if agents is None:
            agents = here
        elif here != agents:
            raise ValueError(f"dense_log['states'][{t}] has agents {here}, dense_log['states'][0] {agents}: "
                             "every timestep needs the same agents")
        for a in here + ["p"]:
            st = state.get(a, state.get(int(a))) if a != "p" else state.get("p", {})
            where = f"dense_log['states'][{t}][{a!r}]"
            if not isinstance(st, dict):
                raise ValueError(f"{where} must be a dict (the agent's state), got {type(st).__name__}")
            if "loc" in st and not _is_loc(st["loc"]):
                raise ValueError(f"{where}['loc'] must be [row, col] (two integers), got {st['loc']!r}")
            for group in ("inventory", "escrow", "endogenous"):
                if group in st and not isinstance(st[group], dict):
                    raise ValueError(f"{where}[{group!r}] must be a dict {{name: number}}, "
                                     f"got {type(st[group]).__name__}")
    for key in ("actions", "rewards"):
        if key in dense_log:
            entries = dense_log[key]
            if not isinstance(entries, list) or len(entries) != T:
                got = f"{len(entries)} entries" if isinstance(entries, list) else type(entries).__name__
                raise ValueError(f"dense_log[{key!r}] must be a list of {T} dicts (one per step 1..T, "
                                 f"'states' has {T + 1} timesteps), got {got}")
            for t, e in enumerate(entries):
                if not isinstance(e, dict):
                    raise ValueError(f"dense_log[{key!r}][{t}] must be a dict keyed by agent index and 'p', "
                                     f"got {type(e).__name__}")
    return agents


def _is_loc(v) -> bool:
    """Whether ``v`` is ``[row, col]``: two integral numbers (a list, tuple or numpy array)."""
    if isinstance(v, (str, bytes, dict)):
        return False
    try:
        pair = list(v)
    except TypeError:
        return False
    return len(pair) == 2 and all(
        isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) and float(x).is_integer()
        for x in pair)


def n_agents(dense_log) -> int:
    """Number of mobile agents (the digit keys of a state)."""
    return sum(1 for k in dense_log["states"][0] if k.isdigit())


def snapshot_timesteps(dense_log) -> list:
    """Timesteps that have a world snapshot (non-empty ``world`` entries)."""
    return [t for t, w in enumerate(dense_log["world"]) if w]


def agent_series(dense_log, group: str, name: str) -> np.ndarray:
    """float64 ``[T + 1, n]``: ``states[t][str(i)][group][name]`` over timesteps and agents.

    Args:
        group: ``"inventory"``, ``"escrow"`` or ``"endogenous"``.
        name: e.g. ``"Wood"``, ``"Coin"``, ``"Labor"``; a name an agent lacks reads 0.

    Raises:
        ValueError: ``group`` is not one of the three.
    """
    if group not in ("inventory", "escrow", "endogenous"):
        raise ValueError(f"group must be 'inventory', 'escrow' or 'endogenous', got {group!r}")
    n = n_agents(dense_log)
    return np.array([[float(s[str(i)].get(group, {}).get(name, 0.0)) for i in range(n)]
                     for s in dense_log["states"]], np.float64)


def _steps(dense_log, key):
    entries = dense_log.get(key)
    if not isinstance(entries, list):
        raise ValueError(f"dense_log has no {key!r} list (its keys are {sorted(dense_log)}); "
                         "the economy has no component that logs it")
    return entries


def trades_by_commodity(dense_log) -> dict:
    """The executed trades of the ``"Trade"`` log, per commodity.

    Returns:
        ``{commodity: {"t": int [k], "price": float [k], "buyer": int [k],
        "seller": int [k]}}``, t = the timestep after the trade's step (step
        t's entry is at index t - 1). Commodities with no trade are absent.

    Raises:
        ValueError: the log has no ``"Trade"`` list.
    """
    rows = {}
    for t, trades in enumerate(_steps(dense_log, "Trade"), start=1):
        if isinstance(trades, dict):  # Foundation-style {"trades": [...]} entries
            trades = trades.get("trades", [])
        for trade in trades:
            rows.setdefault(trade["commodity"], []).append(
                (t, float(trade["price"]), int(trade["buyer"]), int(trade["seller"])))
    out = {}
    for c, r in rows.items():
        a = np.array(r, np.float64)
        out[c] = {"t": a[:, 0].astype(np.int64), "price": a[:, 1],
                  "buyer": a[:, 2].astype(np.int64), "seller": a[:, 3].astype(np.int64)}
    return out


def tax_days(dense_log) -> dict:
    """The tax days of the ``"PeriodicTax"`` log as arrays.

    Returns:
        ``{"t": int [D], "schedule": float [D, B] (rates, 0..1), "cutoffs":
        float [D, B] (bracket lower bounds, coin), "income", "tax_paid",
        "marginal_rate", "effective_rate": float [D, n], "lump_sum": float [D]}``
        with D = the number of tax days (possibly 0; then B is 0 too).

    Raises:
        ValueError: the log has no ``"PeriodicTax"`` list.
    """
    n = n_agents(dense_log)
    days = [(t, e) for t, e in enumerate(_steps(dense_log, "PeriodicTax"), start=1)
            if isinstance(e, dict) and e]
    fields = ("income", "tax_paid", "marginal_rate", "effective_rate")
    if not days:
        out = {"t": np.zeros(0, np.int64), "schedule": np.zeros((0, 0)), "cutoffs": np.zeros((0, 0)),
               "lump_sum": np.zeros(0)}
        out.update({f: np.zeros((0, n)) for f in fields})
        return out
    out = {
        "t": np.array([t for t, _ in days], np.int64),
        "schedule": np.array([e["schedule"] for _, e in days], np.float64),
        "cutoffs": np.array([e["cutoffs"] for _, e in days], np.float64),
        "lump_sum": np.array([float(e["0"]["lump_sum"]) for _, e in days], np.float64),
    }
    for f in fields:
        out[f] = np.array([[float(e[str(i)][f]) for i in range(n)] for _, e in days], np.float64)
    return out
