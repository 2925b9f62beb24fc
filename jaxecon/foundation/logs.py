"""The shim's episode logs: dense log, replay log and the previous episode's logs.

Follows ``BaseEnvironment`` (``ai_economist/foundation/base/base_env.py``):
``_dense_log`` filled in ``step`` and finished in ``_finalize_logs``,
``_replay_log``, ``previous_episode_dense_log`` / ``_replay_log`` /
``_metrics``. The entries are built with :mod:`jaxecon.dense_log`, the
module ``jaxecon run`` uses too. Whether an episode is dense-logged and how
often the world is snapshotted stay on the environment, under Foundation's
attribute names; this class holds the logs themselves (plain Python data, so
it pickles).
"""

from __future__ import annotations

import copy

from jaxecon.dense_log import (
    component_log_entries,
    float_tolist,
    recursive_cast,
    world_snapshot,
)
from jaxecon.foundation.agent_state import all_agent_states


def _copy_actions(actions):
    """A deep copy of an action dict; plain ``{key: int or list of ints}`` dicts
    (what agent loops pass every step) are copied without ``copy.deepcopy``."""
    if type(actions) is dict:
        out = {}
        for k, v in actions.items():
            if type(v) is int:
                out[k] = v
            elif type(v) is list and set(map(type, v)) <= _INT:
                out[k] = v.copy()
            else:
                return copy.deepcopy(actions)
        return out
    return copy.deepcopy(actions)


_INT = {int}


def _empty_dense_log() -> dict:
    return {"world": [], "states": [], "actions": [], "rewards": []}


def _states(core, host, extras: dict) -> dict:
    """One dense-log ``states`` entry: every agent's ``agent.state`` in ``host``,
    then the keys user code wrote into it, ``extras[agent key]`` (deep copies,
    as Foundation's ``deepcopy(agent.state)``)."""
    states = all_agent_states(core, host)
    for key, entries in extras.items():
        states[key].update(copy.deepcopy(entries))
    return states


def _world(core, host) -> dict:
    """Foundation's ``world.maps.state_dict`` in ``host`` as float lists, map order."""
    maps = {k: host.maps[k] for k in core.map_keys}
    return world_snapshot(maps, host.owner, convert=float_tolist)


class EpisodeLogs:
    """The current and the last completed episode's logs.

    Attributes:
        dense_log: ``{"world", "states", "actions", "rewards"}`` lists of the
            current episode (component logs are added when it ends).
        replay_log: ``{"reset": {"seed_state": uint32 key data, "completions":
            int}, "step": [{"actions": ..., "seed_state": ...}, ...]}``.
        previous_dense_log, previous_replay_log: those of the last completed
            (dense-logged, for the dense log) episode.
        previous_metrics: metrics at the end of the last completed episode
            (None before any).
    """

    def __init__(self):
        self.dense_log = _empty_dense_log()
        self.component_logs = {}
        self.previous_dense_log = _empty_dense_log()
        self.replay_log = {"reset": {"seed_state": None}, "step": []}
        self.previous_replay_log = copy.deepcopy(self.replay_log)
        self.previous_metrics = None

    def start_episode(self, seed_state, completions: int) -> None:
        """Empty the current logs; record the reset's key data and episode counter."""
        self.dense_log = _empty_dense_log()
        self.component_logs = {}
        self.replay_log = {"reset": {"seed_state": seed_state, "completions": completions}, "step": []}

    def record_step(self, actions, seed_state) -> None:
        """Replay log: a deep copy of the caller's ``actions`` and the step's key data."""
        self.replay_log["step"].append({"actions": _copy_actions(actions), "seed_state": seed_state})

    def record_timestep(self, core, host, actions: dict, world_every: int, extras: dict) -> None:
        """Dense log, before a step: world snapshot (every ``world_every``
        timesteps, else ``{}``), every agent's state and the non-NO-OP actions.

        Args:
            core: the functional environment.
            host: the ``EnvState`` before the step, numpy.
            actions: ``{idx: {subspace: local action}}``, every agent's
                non-NO-OP actions (``agent_classes.dense_log_actions``).
            world_every: Foundation's ``world_dense_log_frequency``.
            extras: ``{agent key: {key: value}}``: the keys user code added
                to an ``agent.state`` by writing them (kept on the host), logged
                after the others, as Foundation logs every key of ``agent.state``.
        """
        log = self.dense_log
        log["world"].append(_world(core, host) if int(host.timestep) % world_every == 0 else {})
        log["states"].append(_states(core, host, extras))
        log["actions"].append(actions)

    def record_outcome(self, core, prev, host, rewards: dict) -> None:
        """Dense log, after a step: the components' entries and the rewards dict."""
        for name, entry in component_log_entries(core.components, prev, host).items():
            self.component_logs.setdefault(name, []).append(entry)
        self.dense_log["rewards"].append(dict(rewards))

    def finish_episode(self, metrics: dict) -> None:
        """Stash the replay log and ``metrics`` as the previous episode's."""
        self.previous_replay_log = {
            "reset": dict(self.replay_log["reset"]), "step": list(self.replay_log["step"])
        }
        self.previous_metrics = metrics

    def finish_dense_log(self, core, host, extras: dict) -> None:
        """Finish the dense log as Foundation's ``_finalize_logs``: the final
        world and states (with the written keys ``extras``, as in
        ``record_timestep``), each component's log (component order; a
        Foundation-style component's ``get_dense_log()``: a dict's entries
        under ``<shorthand>-<key>``, a list under ``<shorthand>``), then
        ``recursive_cast`` into ``previous_dense_log``, which ``dense_log`` then
        is too (Foundation's ``_dense_log`` and ``_last_ep_dense_log`` are one
        object after the episode ends)."""
        self.dense_log["world"].append(_world(core, host))
        self.dense_log["states"].append(_states(core, host, extras))
        log = copy.deepcopy(self.dense_log)
        for comp in core.components:
            if comp.runs_on_host:  # a Foundation-style component's own get_dense_log()
                entry = comp.host.get_dense_log()
                if isinstance(entry, dict):
                    log.update({f"{comp.shorthand}-{k}": copy.deepcopy(v) for k, v in entry.items()})
                elif isinstance(entry, (tuple, list)):
                    log[comp.shorthand] = copy.deepcopy(list(entry))
                elif entry is not None:
                    raise TypeError(f"component {comp.name}: get_dense_log must return a dict, list, "
                                    f"tuple or None, got {type(entry).__name__}")
            elif comp.shorthand in self.component_logs:
                log[comp.shorthand] = copy.deepcopy(self.component_logs[comp.shorthand])
        self.previous_dense_log = recursive_cast(log)
        self.dense_log = self.previous_dense_log
