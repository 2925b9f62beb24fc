"""Foundation-style dense logs: ``world``, ``states``, ``actions``, ``rewards`` lists.

Foundation's ``BaseEnvironment`` keeps a dense log of one episode
(``ai_economist/foundation/base/base_env.py``, ``_dense_log``): a world
snapshot every ``world_dense_log_frequency`` steps, every agent's state,
the non-NO-OP actions and the rewards at every step. This module turns
host-side numpy slices of jaxecon states into that structure; ``jaxecon run``
and the stateful shim both build their logs with it.
"""

from __future__ import annotations

import numpy as np


def tolist(x):
    a = np.asarray(x)
    if a.dtype.kind == "f":
        a = a.astype(np.float64)
        if np.all(np.isfinite(a)) and np.all(a == np.round(a)):
            return a.astype(np.int64).tolist()
        return np.where(np.isfinite(a), a, np.nan).tolist()
    return a.tolist()


def decode_actions(layout, action) -> dict:
    """``{subspace name: local action}`` of the non-NO-OP actions (Foundation's dense log)."""
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


def dense_log_from_slices(env, first: dict, log: dict, episode: int, frequency: int) -> dict:
    """Foundation-style dense log of env 0 from the reset slice and the scan's per-step slices.

    Args:
        first: ``GridworldRecorder.reset_slice`` of the state after reset
            (timestep 0), numpy.
        log: ``GridworldRecorder.step_slice`` per step stacked over time
            (numpy, leading axis T).
        frequency: world snapshots every ``frequency`` steps (and at the end).
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
            maps = at("maps", t)
            owner = at("owner", t)
            entry = {}
            for k, m in maps.items():
                if k in owner:
                    entry[k] = {"owner": tolist(owner[k]), "health": tolist(m)}
                else:
                    entry[k] = tolist(m)
            world.append(entry)
        else:
            world.append({})
        loc = np.asarray(at("loc", t))
        inv, esc, endo = at("inventory", t), at("escrow", t), at("endogenous", t)
        pinv, pesc = at("planner_inventory", t), at("planner_escrow", t)
        s = {
            str(i): {
                "loc": [int(loc[i, 0]), int(loc[i, 1])],
                "inventory": {k: float(v[i]) for k, v in inv.items()},
                "escrow": {k: float(v[i]) for k, v in esc.items()},
                "endogenous": {k: float(v[i]) for k, v in endo.items()},
            }
            for i in range(n)
        }
        s["p"] = {
            "inventory": {k: float(v) for k, v in pinv.items()},
            "escrow": {k: float(v) for k, v in pesc.items()},
        }
        states.append(s)
    actions, rewards = [], []
    for t in range(T):
        act = {str(i): decode_actions(env.agent_actions, log["action_a"][t][i]) for i in range(n)}
        act["p"] = decode_actions(env.planner_actions, log["action_p"][t])
        actions.append(act)
        rew = {str(i): float(log["reward_a"][t][i]) for i in range(n)}
        rew["p"] = float(log["reward_p"][t])
        rewards.append(rew)
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
