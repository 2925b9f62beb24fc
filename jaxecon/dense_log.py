"""Foundation-style dense logs: ``world``, ``states``, ``actions``, ``rewards`` lists.

Foundation's ``BaseEnvironment`` keeps a dense log of one episode
(``ai_economist/foundation/base/base_env.py``, ``_dense_log``): a world
snapshot every ``world_dense_log_frequency`` steps, every agent's state,
the non-NO-OP actions and the rewards at every step, then each component's
``get_dense_log()``, all passed through ``recursive_cast``. This module builds
those entries from host-side numpy arrays of jaxecon states. ``jaxecon run``
assembles a whole log from a scan's slices (:func:`dense_log_from_slices`);
the stateful shim (``jaxecon.foundation``) appends the same entries step by
step.
"""

from __future__ import annotations

import numpy as np


def tolist(x) -> list:
    """``x`` as (nested) Python lists, compactly: a float array whose values are
    all finite whole numbers becomes ints, other floats stay floats (JSON
    output of ``jaxecon run``); non-float arrays as ``ndarray.tolist``."""
    a = np.asarray(x)
    if a.dtype.kind == "f":
        a = a.astype(np.float64)
        if np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            return a.astype(np.int64).tolist()
        return np.where(np.isfinite(a), a, np.nan).tolist()
    return a.tolist()


def float_tolist(x) -> list:
    """``x`` as (nested) lists of Python floats (float64), as Foundation's
    ``recursive_cast`` turns its float maps into lists."""
    return np.asarray(x, dtype=np.float64).tolist()


def recursive_cast(d):
    """Foundation's ``recursive_cast`` (``base_env.py``, ``_finalize_logs``):
    numpy arrays inside dicts/lists/tuples/sets become lists, numpy scalars
    Python scalars. Returns a new structure (tuples and sets become lists);
    anything else is returned as is."""
    if isinstance(d, dict):
        return {k: recursive_cast(v) for k, v in d.items()}
    if isinstance(d, (list, tuple, set)):
        return [recursive_cast(v) for v in d]
    if isinstance(d, np.ndarray):
        return d.tolist()
    if isinstance(d, np.generic):
        return d.item()
    return d


def world_snapshot(maps: dict, owner: dict, convert=tolist) -> dict:
    """One ``world`` entry: Foundation's ``world.maps.state_dict``, as lists.

    Args:
        maps: ``{name: [H, W] health}`` in output order.
        owner: ``{private landmark: int [H, W] owner}`` (-1 = nobody); a map
            named here is written ``{"owner": ..., "health": ...}``.
        convert: list conversion of the health maps: :func:`tolist`
            (compact, whole numbers as ints) or :func:`float_tolist`
            (Foundation's float lists). Owners are always ints.
    Returns:
        ``{name: [[...]] or {"owner": [[int]], "health": [[...]]}}``.
    """
    out = {}
    for k, m in maps.items():
        if k in owner:
            out[k] = {"owner": tolist(owner[k]), "health": convert(m)}
        else:
            out[k] = convert(m)
    return out


def agent_state(loc, inventory: dict, escrow: dict, endogenous: dict, i: int) -> dict:
    """Foundation's ``agent.state`` core of mobile agent ``i``, as Python scalars.

    Args:
        loc: int [n, 2] (row, col) of every agent.
        inventory, escrow, endogenous: ``{name: float [n]}`` (output order).
    Returns:
        ``{"loc": [row, col], "inventory": {name: float}, "escrow": {...},
        "endogenous": {...}}``.
    """
    loc = np.asarray(loc)
    return {
        "loc": [int(loc[i, 0]), int(loc[i, 1])],
        "inventory": {k: float(v[i]) for k, v in inventory.items()},
        "escrow": {k: float(v[i]) for k, v in escrow.items()},
        "endogenous": {k: float(v[i]) for k, v in endogenous.items()},
    }


def planner_state(inventory: dict, escrow: dict) -> dict:
    """The planner's ``{"inventory": {name: float}, "escrow": {name: float}}``
    from ``{name: float []}`` dicts (output order)."""
    return {
        "inventory": {k: float(v) for k, v in inventory.items()},
        "escrow": {k: float(v) for k, v in escrow.items()},
    }


def decode_actions(layout, action) -> dict:
    """``{subspace name: local action}`` of the non-NO-OP actions (Foundation's dense log).

    Args:
        layout: the agent kind's ``ActionLayout`` (``env.agent_actions`` or
            ``env.planner_actions``).
        action: one agent's functional action: int [] global index
            (single-action mode) or int [subspaces] local indices
            (multi-action mode).
    Returns:
        e.g. ``{"Gather": 3}``; ``{}`` for NO-OP or an agent without actions.
    """
    if layout.passive:
        return {}
    a = np.asarray(action)
    if layout.multi_action_mode:
        return {n: int(v) for n, v in zip(layout.names, a.reshape(-1)) if v > 0}
    g = int(a)
    if g <= 0:
        return {}
    name, k = layout.single_action_map().get(g, (None, 0))
    return {name: int(k)} if name is not None else {}


def rewards_entry(reward_a, reward_p) -> dict:
    """``{"0": float, ..., "n-1": float, "p": float}`` from float [n] and float []."""
    out = {str(i): float(r) for i, r in enumerate(np.asarray(reward_a).reshape(-1))}
    out["p"] = float(reward_p)
    return out


def component_log_entries(components, prev_state, state) -> dict:
    """This step's component dense-log entries: ``{shorthand: entry}``.

    Args:
        components: the environment's components, in list order.
        prev_state, state: host-side (numpy) ``EnvState`` before and after the step.
    Returns:
        Each component's ``dense_log_entry(prev_state, state)`` that is not
        ``None``, through :func:`recursive_cast`, in component order.
    """
    out = {}
    for comp in components:
        entry = comp.dense_log_entry(prev_state, state)
        if entry is not None:
            out[comp.shorthand] = recursive_cast(entry)
    return out


def dense_log_from_slices(env, first: dict, log: dict, episode: int, frequency: int) -> dict:
    """Foundation-style dense log of env 0 from the reset slice and the scan's per-step slices.

    Args:
        env: the functional environment (``n_agents``, ``world_size``,
            ``agent_actions``, ``planner_actions``).
        first: ``GridworldRecorder.reset_slice`` of the state after reset
            (timestep 0), numpy.
        log: ``GridworldRecorder.step_slice`` per step stacked over time
            (numpy, leading axis T).
        episode: episode index written into the log.
        frequency: world snapshots every ``frequency`` steps (and at the end).
    Returns:
        ``{"env_index", "episode", "episode_length", "n_agents", "world_size",
        "world_dense_log_frequency", "world", "states", "actions", "rewards"}``;
        maps and owners via :func:`tolist`, the planner's state without
        ``"endogenous"``.
    """
    n = env.n_agents
    T = int(np.asarray(log["loc"]).shape[0])

    def at(tree, t):
        if t == 0:
            return first[tree]
        v = log[tree]
        return {k: a[t - 1] for k, a in v.items()} if isinstance(v, dict) else v[t - 1]

    world, states = [], []
    for t in range(T + 1):
        if t % frequency == 0 or t == T:
            world.append(world_snapshot(at("maps", t), at("owner", t)))
        else:
            world.append({})
        loc = at("loc", t)
        inv, esc, endo = at("inventory", t), at("escrow", t), at("endogenous", t)
        s = {str(i): agent_state(loc, inv, esc, endo, i) for i in range(n)}
        s["p"] = planner_state(at("planner_inventory", t), at("planner_escrow", t))
        states.append(s)
    actions, rewards = [], []
    for t in range(T):
        act = {str(i): decode_actions(env.agent_actions, log["action_a"][t][i]) for i in range(n)}
        act["p"] = decode_actions(env.planner_actions, log["action_p"][t])
        actions.append(act)
        rewards.append(rewards_entry(log["reward_a"][t], log["reward_p"][t]))
    return {
        "env_index": 0,
        "episode": episode,
        "episode_length": T,
        "n_agents": n,
        "world_size": list(env.world_size),
        "world_dense_log_frequency": frequency,
        "world": world,
        "states": states,
        "actions": actions,
        "rewards": rewards,
    }
