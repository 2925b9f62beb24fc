"""A jaxecon economy as an RLHive environment: ``BaseEnv`` and ``ParallelEnv``.

Follows RLHive 1.0.1's ``hive.envs.base`` (``BaseEnv``, ``ParallelEnv``) and
``hive.envs.env_spec.EnvSpec``, whose spaces are per player. Every mobile
agent is a player and so is every planner: players ``0 .. n-1`` are the
mobile agents (in agent order, so a declared mobile-agent type's agents are
consecutive players), then the planners, one player each, in the order of
``env.agent_groups``; ``num_players == env.num_agents`` (Foundation's
groups: ``n_agents + 1``, the planner last; ``n_planners=0``: ``n_agents``).
``env_spec.env_info["players"]`` names them (``"0" .. "n-1"``, then each
planner's group name, Foundation's ``"p"``) and ``["player_groups"]`` gives
each player's group, whose spaces it has.

- ``BaseEnv``: ``step`` takes every player's action at once (a list of
  ``num_players`` actions) and steps the economy; ``turn`` is always 0.
- ``ParallelEnv``: RLHive's one-player-at-a-time protocol over the same
  economy. ``step(action)`` takes the action of the player whose turn it is
  and returns the next player's observation and turn; once the last player
  (the last planner, or the last mobile agent without a planner) has acted,
  the economy steps with all the actions, and the rewards and ``done`` come
  back with player 0's next observation. Built as
  RLHive prescribes: ``class ParallelEnv(hive ParallelEnv, BaseEnv)``, the
  parallel base first.

When ``hive`` is importable (``BACKEND == "rlhive"``) the classes subclass
RLHive's own ``BaseEnv`` and ``ParallelEnv`` and ``env_spec`` is an instance
of (a subclass of) RLHive's ``EnvSpec``; otherwise (``BACKEND == "jaxecon"``) numpy-only stand-ins with
the same behaviour. Chosen once, at import time.

Per player (``jaxecon.spaces`` objects in ``env_spec.observation_space`` /
``env_spec.action_space``, lists indexed by player):

- observation: agent ``i`` of group ``g``: ``{field: obs[g][field][i - g.start]}``
  (Foundation's: ``obs["a"][field][i]``); a planner: ``obs[its group]``
  (numpy arrays);
- action: an int (single-action mode) or int array ``[n_subspaces]``
  (multi-action mode) inside that player's action space (its group's);
- reward: float32 array ``[num_players]`` (agents, then the planners).

Episodes end at ``episode_length`` (``done``); ``reset`` starts the next,
carrying over what Foundation keeps across episodes. ``save(dir)`` and
``load(dir)`` write and read the complete state (``jaxecon.checkpoint``).

Example::

    from jaxecon.interfaces.rlhive import BaseEnv
    env = BaseEnv(jaxecon.configs.gather_build_config())
    observation, turn = env.reset()
    observation, reward, done, turn, info = env.step([0] * env.env_spec.env_info["num_players"])
"""

from __future__ import annotations

import abc
from typing import Sequence

import numpy as np

from jaxecon import checkpoint, spaces
from jaxecon.interfaces.host import HostEconomy, Outputs, as_env, check_action, spaces_of

try:
    from hive.envs.base import BaseEnv as _HiveBaseEnv
    from hive.envs.base import ParallelEnv as _HiveParallelEnv
    from hive.envs.env_spec import EnvSpec as _HiveEnvSpec
except ImportError:
    _HiveBaseEnv = None

__all__ = ["BACKEND", "BaseEnv", "EnvSpec", "ParallelEnv"]


_EnvSpecBase = object if _HiveBaseEnv is None else _HiveEnvSpec


class EnvSpec(_EnvSpecBase):
    """RLHive's ``EnvSpec`` (a subclass of it when RLHive is importable): the
    environment's name, the per-player observation and action spaces and
    other information. RLHive 1.0 calls the spaces ``obs_dim`` and
    ``act_dim``, its later versions ``observation_space`` and
    ``action_space``; both names are here.

    Args:
        env_name: the environment's name (here the scenario's).
        observation_space: list of per-player observation spaces.
        action_space: list of per-player action spaces.
        env_info: dict of anything else (default ``{}``).
    """

    def __init__(self, env_name, observation_space, action_space, env_info=None):
        if _EnvSpecBase is not object:
            super().__init__(env_name, observation_space, action_space, env_info)
        self._name = env_name
        self._spaces = (observation_space, action_space)
        self._info = {} if env_info is None else env_info

    @property
    def env_name(self):
        """The environment's name."""
        return self._name

    @property
    def observation_space(self):
        """Per-player observation spaces (a list)."""
        return self._spaces[0]

    @property
    def action_space(self):
        """Per-player action spaces (a list)."""
        return self._spaces[1]

    @property
    def obs_dim(self):
        """RLHive 1.0's name for ``observation_space``."""
        return self._spaces[0]

    @property
    def act_dim(self):
        """RLHive 1.0's name for ``action_space``."""
        return self._spaces[1]

    @property
    def env_info(self) -> dict:
        """Other information about the environment."""
        return self._info


class _NativeBaseEnv(abc.ABC):
    """RLHive's ``BaseEnv`` without RLHive (``hive.envs.base.BaseEnv``'s behaviour)."""

    def __init__(self, env_spec, num_players):
        self._env_spec = env_spec
        self._num_players = num_players
        self._turn = 0

    @abc.abstractmethod
    def reset(self):
        """``(observation, turn)`` of a new episode."""

    @abc.abstractmethod
    def step(self, action):
        """``(observation, reward, done, turn, info)`` after ``action``."""

    def render(self, mode="rgb_array"):
        """Raises NotImplementedError unless a subclass renders."""
        raise NotImplementedError

    @abc.abstractmethod
    def seed(self, seed=None):
        """Reseed the environment."""

    def save(self, save_dir):
        """Raises NotImplementedError unless a subclass saves."""
        raise NotImplementedError

    def load(self, load_dir):
        """Raises NotImplementedError unless a subclass loads."""
        raise NotImplementedError

    def close(self):
        """Raises NotImplementedError unless a subclass cleans up."""
        raise NotImplementedError

    @property
    def env_spec(self):
        """The ``EnvSpec``."""
        return self._env_spec

    @env_spec.setter
    def env_spec(self, env_spec):
        self._env_spec = env_spec

    @classmethod
    def type_name(cls):
        """``"env"``, RLHive's registry type of environments."""
        return "env"


class _NativeParallelEnv(_NativeBaseEnv):
    """RLHive's ``ParallelEnv`` without RLHive: put it first in the bases of a
    class whose next base steps with every player's actions; ``step`` then
    takes one player's action at a time (``hive.envs.base.ParallelEnv``'s
    behaviour, reward 0 until the round is complete)."""

    def __init__(self, env_name, num_players):
        super().__init__(env_name, num_players)
        self._actions = []
        self._obs = None
        self._info = None
        self._done = False

    def reset(self):
        self._obs, _ = super().reset()
        return self._obs[0], 0

    def step(self, action):
        self._actions.append(action)
        if len(self._actions) == self._num_players:
            observation, reward, done, _, info = super().step(self._actions)
            self._actions = []
            self._turn = 0
            self._obs = observation
            self._info = info
            self._done = done
        else:
            self._turn = (self._turn + 1) % self._num_players
            reward = 0
        return self._obs[self._turn], reward, self._done and self._turn == 0, self._turn, self._info


if _HiveBaseEnv is None:
    BACKEND = "jaxecon"
    _Base, _Parallel = _NativeBaseEnv, _NativeParallelEnv
else:
    BACKEND = "rlhive"
    _Base, _Parallel = _HiveBaseEnv, _HiveParallelEnv


def _action_bounds(space) -> tuple:
    """``(shape, low, high)`` of a Discrete or MultiDiscrete action space."""
    if isinstance(space, spaces.MultiDiscrete):
        nvec = np.asarray(space.nvec)
        return nvec.shape, 0, nvec - 1
    return (), 0, int(space.n) - 1


def _players_of(groups) -> list:
    """``[(player id, group)]`` in player order: each mobile group's agents
    (ids ``str(agent index)``), then each planner (id: its group's name)."""
    return [(g.name if g.is_planner else str(i), g) for g in groups
            for i in range(g.start, g.start + g.count)]


class BaseEnv(_Base):
    """A jaxecon economy as an RLHive ``BaseEnv``: every player acts in one ``step``.

    Args:
        env_or_config: a jaxecon env (``jaxecon.make(...)``) or a
            Foundation-style config dict (``jaxecon.make_from_config``).
        num_players: optional; if given it must be ``env.num_agents``, one
            player per agent of every group (Foundation's: ``n_agents + 1``).
    Raises:
        TypeError: ``env_or_config`` is neither an env nor a config dict.
        ValueError: a bad config (a bad group declaration names the group),
            or another ``num_players`` (naming the groups' counts).
    """

    _KIND = "rlhive.BaseEnv"

    def __init__(self, env_or_config, num_players=None):
        env = as_env(env_or_config)
        players = _players_of(env.agent_groups)
        n, count = env.n_agents, len(players)
        if num_players is not None and num_players != count:
            per_group = ", ".join(f"{g.name} {g.count}" for g in env.agent_groups)
            planners = count - n
            whom = (f"n_agents ({n}) plus {planners} planner{'s' if planners > 1 else ''}" if planners
                    else f"n_agents ({n}), no planner")
            raise ValueError(f"num_players must be {count}: {whom}, one player per agent of each group "
                             f"({per_group}); got {num_players!r}")
        self._economy = HostEconomy(env)
        of = spaces_of(env)
        env_spec = EnvSpec(
            env.name,
            [of[g.name][0] for _, g in players],
            [of[g.name][1] for _, g in players],
            env_info={"n_agents": n, "num_players": count, "players": [p for p, _ in players],
                      "player_groups": [g.name for _, g in players], "episode_length": env.episode_length},
        )
        super().__init__(env_spec, count)

    @property
    def env(self):
        """The jaxecon env underneath."""
        return self._economy.env

    @property
    def num_players(self) -> int:
        """``env.num_agents``: the mobile agents and the planners (Foundation's: ``n_agents + 1``)."""
        return self._num_players

    def _players(self, obs: dict) -> list:
        """Per-player observations: each mobile group's agents' slices of
        ``obs[group]``, then each planner's ``obs[group]``."""
        out = []
        for g in self.env.agent_groups:
            rows = obs[g.name]
            out += [rows] if g.is_planner else [{k: v[i] for k, v in rows.items()} for i in range(g.count)]
        return out

    def _joint(self, checked: list) -> dict:
        """``step``'s actions keyed by group from the players' (in player order)."""
        out, first = {}, 0
        for g in self.env.agent_groups:
            out[g.name] = checked[first] if g.is_planner else np.stack(checked[first:first + g.count])
            first += g.count
        return out

    def _check_player_action(self, player: int, action) -> np.ndarray:
        shape, low, high = _action_bounds(self.env_spec.action_space[player])
        name = f"action of player {player}"
        if not self.env.has_foundation_groups:
            name += f" (group {self.env_spec.env_info['player_groups'][player]!r})"
        return check_action(action, shape, low, high, name)

    def reset(self):
        """Start an episode.

        Returns:
            ``(observation, turn)``: the list of per-player observations and 0.
        """
        outputs = self._economy.reset()
        self._turn = 0
        return self._players(outputs.obs), 0

    def step(self, action):
        """Step the economy with every player's action.

        Args:
            action: a sequence of ``num_players`` actions, in player order:
                the mobile agents, then the planners (each an int, or an int
                array in multi-action mode).
        Returns:
            ``(observation, reward, done, turn, info)``: per-player
            observations, float32 rewards ``[num_players]``, whether the
            episode reached its length, 0, and the step's info dict.
        Raises:
            ValueError: not ``num_players`` actions, or an action outside
                its player's action space (names the player and, with
                declared groups, its group).
            RuntimeError: before the first ``reset``.
        """
        if isinstance(action, (str, bytes, dict)) or not isinstance(action, (Sequence, np.ndarray)) \
                or len(action) != self._num_players:
            n = self.env.n_agents
            planners = [g.name for g in self.env.planner_groups]
            raise ValueError(
                f"action must be a sequence of num_players={self._num_players} actions "
                f"(agents 0..{n - 1}" + (f", then the planners {planners}" if planners else "")
                + f"), got {action!r}"
            )
        checked = [self._check_player_action(i, a) for i, a in enumerate(action)]
        outputs = self._economy.step(self._joint(checked))
        self._turn = 0
        reward = np.concatenate([np.asarray(outputs.reward[g.name], np.float32).reshape(-1)
                                 for g in self.env.agent_groups])
        return self._players(outputs.obs), reward, bool(outputs.done), 0, outputs.info

    def seed(self, seed=None):
        """Reseed with ``seed`` (int >= 0), or a fresh random seed when None;
        the next ``reset`` draws from it.

        Raises:
            ValueError: ``seed`` is not None or an int >= 0.
        """
        if seed is None:
            seed = int(np.random.default_rng().integers(2**31))
        self._economy.seed(seed)

    def render(self, mode="rgb_array"):
        """``"rgb_array"``: the world as uint8 ``[H, W, 3]``
        (``jaxecon.render.render_world``); ``"human"``: shows it in a
        matplotlib figure and returns None.

        Raises:
            ValueError: an unknown ``mode`` (lists "rgb_array" and "human").
            RuntimeError: before the first reset.
        """
        return self._economy.render(mode)

    def close(self):
        """Close the ``"human"`` figure, if any."""
        self._economy.close()

    # ------------------------------------------------------------------ save/load
    def _extra(self) -> dict:
        e = self._economy
        out = e.outputs
        return {"key": e.key, "outputs": {"obs": out.obs, "reward": out.reward,
                                          "done": out.done, "info": out.info}}

    def _restore_extra(self, extra) -> None:
        e = self._economy
        e.key = extra["key"]
        out = extra["outputs"]
        e.outputs = Outputs(out["obs"], out["reward"], out["done"], dict(out.get("info", {})))

    def save(self, save_dir):
        """Write the complete state (economy, params, PRNG key, turn-taking) to ``save_dir``.

        Raises:
            RuntimeError: before the first ``reset`` (there is no state yet).
        """
        if self._economy.state is None:
            raise RuntimeError("save() before reset(): there is no state to save yet")
        e = self._economy
        checkpoint.write(save_dir, checkpoint.snapshot(e.env, e.state, e.params,
                                                       extra=self._extra(), kind=self._KIND))

    def load(self, load_dir):
        """Restore what ``save`` wrote; the env then continues bit for bit.

        Raises:
            FileNotFoundError: ``load_dir`` is missing or not a checkpoint.
            ValueError: it was saved by another class, or from an env of
                another configuration (names the differing keys).
        """
        snap = checkpoint.read(load_dir, self.env, kind=self._KIND)
        self._economy.state, self._economy.params = snap.state, snap.params
        self._restore_extra(snap.extra)


class ParallelEnv(_Parallel, BaseEnv):
    """A jaxecon economy as an RLHive ``ParallelEnv``: one player's action per ``step``.

    ``reset()`` returns ``(player 0's observation, 0)``. ``step(action)``
    records the action of the player whose turn it is; until the last player
    (Foundation's: the planner, player ``n``) has acted it returns ``(next
    player's observation, zeros [num_players], False, next turn, last
    info)``; the last player's action steps the economy and returns
    ``(player 0's new observation, rewards [num_players], done, 0, info)``. RLHive's base returns the int 0 as the
    reward between rounds; this class returns float32 zeros of the same
    shape as a round's rewards.

    Args and errors: as ``BaseEnv``; an action outside the current player's
    action space is a ``ValueError`` naming the player, raised before it is
    recorded.
    """

    _KIND = "rlhive.ParallelEnv"

    def __init__(self, env_or_config, num_players=None):
        env = as_env(env_or_config)
        super().__init__(env, env.num_agents if num_players is None else num_players)

    def reset(self):
        """Start an episode (dropping a round's pending actions); ``(player 0's observation, 0)``.

        Until the first round completes, ``step`` returns the reset's info,
        ``{}`` (RLHive's base keeps the last round's, or None at first), so
        that an env restored by ``load`` mid-round returns what it would have.
        """
        self._actions = []
        self._turn = 0
        out = super().reset()
        self._info = self._economy.outputs.info
        return out

    def step(self, action):
        """Record the current player's ``action``; see the class docstring."""
        if self._economy.state is None:
            raise RuntimeError("step() before reset(): reset the environment first")
        checked = self._check_player_action(self._turn, action)
        observation, reward, done, turn, info = super().step(checked)
        if not isinstance(reward, np.ndarray):
            reward = np.zeros(self._num_players, np.float32)
        return observation, reward, done, turn, info

    def _extra(self) -> dict:
        out = super()._extra()
        # the pending actions of players 0..turn-1, flat: their shapes differ between groups
        pending = [np.ravel(a) for a in self._actions]
        out.update(turn=self._turn, done=bool(self._done),
                   pending=np.concatenate(pending).astype(np.int32) if pending else np.zeros(0, np.int32))
        return out

    def _restore_extra(self, extra) -> None:
        super()._restore_extra(extra)
        self._turn = int(extra["turn"])
        self._done = bool(extra["done"])
        shapes = [_action_bounds(self.env_spec.action_space[i])[0] for i in range(self._turn)]
        ends = np.cumsum([int(np.prod(s)) for s in shapes]).astype(int)
        flat = np.ravel(extra["pending"])  # also the [turn, n_subspaces] array of earlier saves
        self._actions = [flat[end - int(np.prod(s)):end].reshape(s) for s, end in zip(shapes, ends)]
        self._obs = self._players(self._economy.outputs.obs)
        self._info = self._economy.outputs.info
