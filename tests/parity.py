"""Test-only helpers for step-by-step parity runs: one action dict, two simulators.

A parity test draws Foundation-style actions on the reference env (with
:func:`reference.random_valid_actions`), steps the reference with them, and
steps jaxecon with the same actions converted by :func:`to_jax_actions`.
Steps are deterministic only when no two agents move onto the same tile in
one step (Foundation resolves such a conflict by its random agent order);
:func:`deconflict_moves` turns the later of two such moves into a NO-OP.
:data:`DETERMINISTIC_BUILD` and :data:`DETERMINISTIC_GATHER` are the
canonical Build and Gather kwargs with Gather's bonus draw switched off
(``skill_dist="none"``), the component list of every deterministic Gather +
Build parity run.

Nothing here imports jaxecon or ai_economist: the functions read the env
objects they are given.
"""

from __future__ import annotations

import copy

import numpy as np

__all__ = ["DETERMINISTIC_BUILD", "DETERMINISTIC_GATHER", "GATHER_MOVES", "deconflict_moves", "to_jax_actions"]

#: Build as in the canonical config (its skill draw happens at reset only).
DETERMINISTIC_BUILD: dict = {
    "Build": {"payment": 10, "payment_max_skill_multiplier": 3, "skill_dist": "pareto", "build_labor": 10}
}

#: Gather as in the canonical config but without the random bonus unit.
DETERMINISTIC_GATHER: dict = {"Gather": {"move_labor": 1, "collect_labor": 1, "skill_dist": "none"}}

#: Gather's action index -> (row, column) offset: 1 left, 2 right, 3 up, 4 down.
GATHER_MOVES = {1: (0, -1), 2: (0, 1), 3: (-1, 0), 4: (1, 0)}


def deconflict_moves(actions: dict, ref_env) -> dict:
    """``actions`` with every Gather move onto an already-targeted tile made a NO-OP.

    Agents are visited in index order; the first to target a tile keeps its
    move, later ones targeting the same tile get Gather action 0 (quirk Q2:
    Foundation lets the first agent of its random order take the tile).

    Args:
        actions: ``{str(agent_idx): action}`` for the mobile agents (the
            planner's entry, if any, is copied unchanged): an ``int`` flat
            index in single-action mode, a per-subspace ``list[int]`` in
            multi-action mode.
        ref_env: the reference env whose ``world.agents`` give each agent's
            ``loc``, action mode and action map.

    Returns:
        A deep copy of ``actions``; the input is not modified.
    """
    taken, out = set(), copy.deepcopy(actions)
    for i, agent in enumerate(ref_env.world.agents):
        a = out[str(i)]
        if agent.multi_action_mode:
            j = agent._action_names.index("Gather")
            move = a[j]
        else:
            sub = agent.single_action_map.get(a) if a > 0 else None
            move = sub[1] if sub and sub[0] == "Gather" else 0
        if move:
            dr, dc = GATHER_MOVES[move]
            target = (agent.loc[0] + dr, agent.loc[1] + dc)
            if target in taken:
                if agent.multi_action_mode:
                    a[j] = 0
                else:
                    out[str(i)] = 0
            taken.add(target)
    return out


def to_jax_actions(actions: dict, env) -> dict:
    """Foundation's action dict as jaxecon's ``{"a": int32[n_agents, ...], "p": int32[...]}``.

    Args:
        actions: ``{"0".."n-1": action, "p": planner action}`` as
            :func:`reference.random_valid_actions` returns: an ``int`` per
            agent in single-action mode, a ``list[int]`` (one per subspace)
            in multi-action mode.
        env: the jaxecon env (its ``n_agents`` and
            ``planner_actions.action_shape`` shape the arrays).
    """
    a = np.array([actions[str(i)] for i in range(env.n_agents)], dtype=np.int32)
    p = np.asarray(actions["p"], dtype=np.int32).reshape(env.planner_actions.action_shape)
    return {"a": a, "p": p}


def builtin_names(registry, core_registry=None, package="jaxecon.") -> set:
    """Names in ``registry`` whose class ships with ``package`` (``"jaxecon."``,
    or ``"ai_economist."`` for the reference's registries): other tests
    register test-only classes in both. For the shim's scenario registry,
    whose classes are all made in ``jaxecon.foundation``, pass
    ``jaxecon.scenario_registry`` as ``core_registry``: a name counts when its
    functional class ships with jaxecon."""
    def shipped(name):
        if core_registry is not None:
            return core_registry.has(name) and core_registry.get(name).__module__.startswith(package)
        return registry.get(name).__module__.startswith(package)
    return {n for n in registry.entries if shipped(n)}


def kind(v):
    """The structure Foundation's users see: dict order and nesting, list lengths,
    array shapes; Python and numpy numbers count alike."""
    if isinstance(v, dict):
        return {k: kind(x) for k, x in v.items()}, list(v)
    if isinstance(v, list):
        return "list", len(v)
    if isinstance(v, np.ndarray):
        return "array", v.shape
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
        return "number"
    return type(v).__name__
