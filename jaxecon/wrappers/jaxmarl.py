"""A JaxMARL front: a jaxecon economy as a JaxMARL ``MultiAgentEnv``.

Follows ``jaxmarl.environments.multi_agent_env.MultiAgentEnv`` (JaxMARL 0.2):
``reset(key) -> (obs, state)``; ``step(key, state, actions, reset_state=None)
-> (obs, state, rewards, dones, infos)`` with per-agent dicts and
``dones["__all__"]``, auto-resetting when the episode ends; ``step_env``
without the reset; ``get_obs(state)``; ``get_avail_actions(state)``;
``observation_space(agent)``, ``action_space(agent)``; ``agents``,
``num_agents``, ``agent_classes``, ``name``. When JaxMARL is installed,
``MultiAgentEnv`` subclasses its ``MultiAgentEnv``; without it, it has the same
methods. JaxMARL's functions take no params: they are fixed at construction
(``with_params`` makes a copy with others).

Agents are Foundation's ids: ``"0" .. "n-1"`` (mobile agents) and ``"p"``
(the planner). JaxMARL's baselines stack agents with equal observation and
action shapes; the planner's differ, so by default (``planner_policy="noop"``)
the planner is not an agent and sends NO-OP every step
(``jaxecon.wrappers.planner``): ``agents`` are the mobile agents alone, and
code written for an env whose agents all look alike runs unchanged. With
``planner_policy=None`` the planner is agent ``"p"`` too (two-level training).
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.backend import as_unrolled_key
from jaxecon.core.groups import PLANNER_GROUP
from jaxecon.wrappers.base import Wrapper, unwrap_state
from jaxecon.wrappers.flat import INVALID_ACTIONS, flat_observation, mask_heads, remap_forbidden
from jaxecon.wrappers.front import Front
from jaxecon.wrappers.library_spaces import to_library_space
from jaxecon.wrappers.planner import make_planner_policy

try:
    from jaxmarl.environments.multi_agent_env import MultiAgentEnv as _JaxMARLEnv

    JAXMARL_AVAILABLE = True
except ImportError:  # JaxMARL is optional (extra "jaxmarl")
    _JaxMARLEnv = object
    JAXMARL_AVAILABLE = False

__all__ = ["JAXMARL_AVAILABLE", "PLANNER", "MultiAgentEnv"]

#: The planner's agent id: Foundation's, whatever its group's name (JaxMARL's agents
#: are Foundation's ids "0".."n-1", "p": the edge).
PLANNER = PLANNER_GROUP

#: What an info entry that is one scalar can be (``info_keys=None`` keeps those).
_ARRAY_TYPES = (jax.Array, np.ndarray, np.generic, bool, int, float)


class MultiAgentEnv(Front, _JaxMARLEnv):
    """A jaxecon economy as a JaxMARL multi-agent environment.

    Args:
        env: a jaxecon functional env (``jaxecon.make``) or a ``Wrapper`` of one,
            not auto-resetting, with ``flatten_masks=True``.
        params: the ``EnvParams`` every call uses (default ``env.default_params``).
        planner_policy: how the planner acts. ``"noop"`` (default): it is not
            an agent and sends NO-OP (action 0 in every head) each step, so
            ``agents`` holds the mobile agents only; likewise ``"random"``,
            fixed planner actions, or a callable ``(key, planner_obs, state) ->
            action`` (``jaxecon.wrappers.planner``). ``None``: the planner is
            agent ``"p"`` and acts by ``actions["p"]``. In an economy without
            a planner (``n_planners=0``) only ``"noop"`` and ``None`` are
            allowed, and both mean the same: no planner.
        info_keys: which entries of the wrapped env's info ``infos`` holds.
            None (default): those that are one scalar (shape ``[]``), plus
            ``"planner_reward"``; a sequence of entry names: those, whatever
            their shape (observation side channels, ``"episode_metrics"``...);
            ``"all"``: every entry. Kept as the attribute ``info_keys`` (None,
            ``"all"`` or a tuple).
        invalid_actions: what an action the mask forbids (or out of range)
            does: ``"noop"`` (default, Foundation's rule: a NO-OP) or
            ``"remap"``: replaced by a uniformly random allowed action (NO-OP
            included; per head in multi-action mode), drawn with
            ``jax.random.fold_in`` of the planner's key (``step_env``'s first
            split) by the group's index; for mask-blind learners (JaxMARL's
            IPPO feed-forward baselines), which otherwise learn that most
            actions do nothing (``flat.remap_forbidden``).
    Raises:
        TypeError: ``env`` is not a jaxecon env/wrapper or already auto-resets.
        ValueError: ``flatten_masks=False``; an unknown ``planner_policy``; a
            ``planner_policy`` other than ``"noop"`` or None without a planner;
            ``info_keys`` not None, ``"all"`` or a sequence of entry names of
            the wrapped env's info (the message lists them); ``invalid_actions``
            not one of ``flat.INVALID_ACTIONS``.
        TypeError / ValueError: ``params`` that are not the env's
            (``Economy.check_params``).

    Per agent (``n`` = n_agents; "float" is float32, float64 under x64):

    - ``obs[agent]``: float32 [obs_dim] (the agent's observation fields except
      ``"action_mask"``, flattened and concatenated in sorted field order;
      ``jaxecon.wrappers.flat``); mobile agents share one obs_dim, the
      planner has its own;
    - ``actions[agent]``: int32 [] (single-action mode; ``[1]`` is accepted
      too, the shape JaxMARL's MPE and IPPO feed-forward baselines pass, so
      ``[num_envs, 1]`` under ``vmap``) or [n_heads] (multi-action
      mode: the planner by default, one head per tax bracket);
    - ``rewards[agent]``: float []; ``dones[agent]`` and ``dones["__all__"]``:
      bool [], all equal (every agent's episode ends at the time limit);
    - ``get_avail_actions(state)[agent]``: bool [n_actions], or
      [n_heads, max(dims)] in multi-action mode (row k: head k's mask, its
      NO-OP first, padded with False);
    - ``infos``: ``{name: [num_agents, *shape]}``, each kept entry of the
      wrapped env's info repeated per agent (JaxMARL's baselines reshape
      every info leaf to one entry per agent), plus ``"planner_reward"``:
      float [num_agents] when the planner acts by ``planner_policy``. By
      default (``info_keys=None``) only the entries that are one scalar are
      kept, so every leaf is [num_agents] (IPPO's
      ``x.reshape((num_actors,))`` works) and a script that stores every
      step's infos stores a few bytes per agent (``docs/wrappers.md``);
      larger entries (a ``LogWrapper``'s returns and metrics dicts, an
      observation adapter's side channels) when ``info_keys`` names them.

    ``state`` is the wrapped env's state. The auto-reset calls
    ``env.reset(key, params, prev_state=final_state)``, so what Foundation
    keeps across episodes carries over; with ``reset_state`` given it resets
    to that state instead, as JaxMARL's ``step`` does. Keys: ``step`` splits
    ``key, k_reset``; ``step_env`` splits ``k_planner, k_env``.
    """

    def __init__(self, env, params=None, planner_policy="noop", info_keys=None, invalid_actions="noop"):
        base = env.unwrapped if isinstance(env, Wrapper) else env
        planner = getattr(base, "planner_group", None)
        has_planner = planner is not None
        #: the planner's group, the key of its observations, actions, rewards and masks
        self._planner_name = planner.name if has_planner else None
        self._mobile_groups = tuple(getattr(base, "mobile_groups", ()))
        groups = tuple(g.name for g in self._mobile_groups)
        flat = self._wrap(env, groups + ((self._planner_name,) if has_planner else ()))
        if not has_planner and planner_policy is not None and not (
            isinstance(planner_policy, str) and planner_policy == "noop"
        ):
            raise ValueError(
                f'planner_policy must be "noop" (the default) or None: the economy has no planner '
                f"(n_planners=0), got {planner_policy!r}"
            )
        base = self._base
        self._params = env.default_params if params is None else params
        base.check_params(self._params)
        self.mobile_agents = [str(i) for i in range(base.n_agents)]
        self._has_planner = has_planner
        by_policy = has_planner and planner_policy is not None
        self._planner = make_planner_policy(base, planner_policy) if by_policy else None
        agents = self.mobile_agents + ([PLANNER] if self.trains_planner else [])
        if _JaxMARLEnv is not object:
            super().__init__(num_agents=len(agents))
        self.num_agents = len(agents)
        self.agents = agents
        self._group_of = {str(i): g.name for g in self._mobile_groups for i in range(g.start, g.stop)}
        self._group_of.update({PLANNER: self._planner_name} if self.trains_planner else {})
        # JaxMARL's own space classes when installed (``jaxecon.wrappers.library_spaces``)
        used = set(self._group_of.values())
        obs_spaces = {g: to_library_space(flat[g], "jaxmarl") for g in used}
        act_spaces = {g: to_library_space(base.action_space(g), "jaxmarl") for g in used}
        self.observation_spaces = {a: obs_spaces[self._group_of[a]] for a in agents}
        self.action_spaces = {a: act_spaces[self._group_of[a]] for a in agents}
        if not isinstance(invalid_actions, str) or invalid_actions not in INVALID_ACTIONS:
            raise ValueError(f"invalid_actions must be one of {INVALID_ACTIONS}, got {invalid_actions!r}")
        self.invalid_actions = invalid_actions
        self.info_keys = info_keys if info_keys is None else self._check_info_keys(info_keys)

    def _check_info_keys(self, info_keys):
        """``"all"`` or a tuple of entry names of ``_full_step``'s info (traced
        once, not compiled); raise ``ValueError`` otherwise (naming the allowed values)."""
        if isinstance(info_keys, str) and info_keys == "all":
            return info_keys
        if isinstance(info_keys, str) or not isinstance(info_keys, Sequence) or not all(
            isinstance(k, str) for k in info_keys
        ):
            raise ValueError(f'info_keys must be None, "all" or a sequence of info entry names, got {info_keys!r}')

        def info(key):
            _, state = self._env.reset(key, self._params)
            zeros = {a: jnp.zeros(self.action_spaces[a].shape, jnp.int32) for a in self.agents}
            return self._full_step(key, state, zeros)[4]

        allowed = sorted(jax.eval_shape(info, jax.random.key(0)))
        unknown = [k for k in info_keys if k not in allowed]
        if unknown:
            raise ValueError(f"info_keys: unknown names {unknown}; allowed: {allowed}")
        return tuple(info_keys)

    # ------------------------------------------------------------ structure
    @property
    def trains_planner(self) -> bool:
        """Whether the planner is an agent (the economy has one and no
        ``planner_policy`` was given)."""
        return self._has_planner and self._planner is None

    @property
    def params(self):
        """The ``EnvParams`` every call uses."""
        return self._params

    def with_params(self, params) -> "MultiAgentEnv":
        """A copy of this env whose calls use ``params`` (same structure; the
        copy's jitted methods compile once for it)."""
        self._base.check_params(params)
        other = copy.copy(self)
        other._params = params
        return other

    @property
    def agent_classes(self) -> dict:
        """``{"mobile": ["0", ..., "n-1"], "planner": ["p"]}`` (no planner entry
        when the planner acts by ``planner_policy`` or the economy has none);
        with declared mobile-agent types, one entry per type, by its group name,
        instead of ``"mobile"``."""
        if len(self._mobile_groups) == 1:
            out = {"mobile": list(self.mobile_agents)}
        else:
            out = {g.name: [str(i) for i in range(g.start, g.stop)] for g in self._mobile_groups}
        if self.trains_planner:
            out["planner"] = [PLANNER]
        return out

    def _check_agent(self, agent) -> str:
        if agent not in self.agents:
            raise ValueError(f"agent must be one of {self.agents}, got {agent!r}")
        return agent

    def observation_space(self, agent: str):
        """The agent's flat observation: a float32 ``Box`` [obs_dim] (bounds from
        ``env.observation_space``), JaxMARL's own class when JaxMARL is
        installed (``jaxecon.wrappers.library_spaces``), else jaxecon's. Raises ``ValueError`` for an
        agent id not in ``agents``."""
        return self.observation_spaces[self._check_agent(agent)]

    def action_space(self, agent: str):
        """``Discrete(n_actions)`` or ``MultiDiscrete(dims)`` (``env.action_space``),
        JaxMARL's classes when installed. Raises ``ValueError`` for an agent id not in ``agents``."""
        return self.action_spaces[self._check_agent(agent)]

    # ------------------------------------------------------------ functions
    @property
    def group_of(self) -> dict:
        """``{agent: group name}`` for every agent of ``agents`` (the planner:
        its group's, Foundation's ``"p"``), the name ``env.observation_space`` /
        ``action_space`` take."""
        return dict(self._group_of)

    def by_agent(self, by_group: dict) -> dict:
        """``{agent: entry}`` from a dict keyed by group (observations, rewards,
        masks): a mobile group's pytree has a leading [count] axis, and agent
        ``str(g.start + i)`` gets row ``i`` of every leaf; ``"p"`` (only when
        ``trains_planner``) gets its group's entry as it is. Groups of
        ``by_group`` that are no agent's (a planner acting by policy) are left out."""
        out = {}
        for g in self._mobile_groups:
            rows = by_group[g.name]
            out.update({str(g.start + i): jax.tree.map(lambda x, i=i: x[i], rows) for i in range(g.count)})
        if self.trains_planner:
            out[PLANNER] = by_group[self._planner_name]
        return out

    def _obs_dict(self, obs) -> dict:
        flat = {g.name: flat_observation(obs[g.name], 1) for g in self._mobile_groups}
        if self.trains_planner:
            flat[self._planner_name] = flat_observation(obs[self._planner_name], 0)
        return self.by_agent(flat)

    @partial(jax.jit, static_argnums=(0,))
    def reset(self, key):
        """``(obs, state)`` of a fresh episode (``env.reset(key, params)``)."""
        obs, state = self._env.reset(as_unrolled_key(key), self._params)
        return self._obs_dict(obs), state

    def get_obs(self, state) -> dict:
        """The per-agent flat observations at ``state``, from the jaxecon env's
        ``observe`` (used for ``step``'s ``reset_state``)."""
        return self._obs_dict(self._base.observe(unwrap_state(state), self._params))

    def _check_actions(self, actions) -> None:
        """Raise ``ValueError`` unless ``actions`` is ``{agent: integer array of
        its action space's shape}`` with exactly the keys ``agents`` (a
        ``Discrete`` agent's action may also be ``[1]``-shaped, as the MPE
        baselines pass it: ``_agent_action`` drops the axis)."""
        if not isinstance(actions, dict):
            raise ValueError(f"actions must be a dict keyed by agent id {self.agents}, got {type(actions).__name__}")
        unknown = [a for a in actions if a not in self.agents]
        missing = [a for a in self.agents if a not in actions]
        if unknown or missing:
            raise ValueError(
                f"actions must have exactly the keys {self.agents}; unknown: {unknown}, missing: {missing}"
            )
        for agent in self.agents:
            shape = self.action_spaces[agent].shape
            if shape == () and np.shape(actions[agent]) == (1,):
                shape = (1,)
            self._check_action(actions[agent], shape, f"actions[{agent!r}]")

    def _agent_action(self, agent: str, value) -> jax.Array:
        """int32 of ``agent``'s action space's shape (a trailing singleton axis
        of a ``Discrete`` agent's action dropped)."""
        a = jnp.asarray(value, jnp.int32)
        return a.reshape(()) if self.action_spaces[agent].shape == () else a

    def joint_actions(self, key, state, actions) -> dict:
        """The functional env's actions (keyed by group) from ``{agent: action}``,
        the planner's drawn from ``planner_policy`` with ``key`` when it is not
        an agent.

        Raises:
            ValueError: as ``step_env``.
        """
        self._check_actions(actions)
        joint = {g.name: jnp.stack([self._agent_action(str(i), actions[str(i)]) for i in range(g.start, g.stop)])
                 for g in self._mobile_groups}
        if self.trains_planner:
            joint[self._planner_name] = self._agent_action(PLANNER, actions[PLANNER])
        if self.invalid_actions == "remap":  # the agents' actions, before the planner's policy draws
            masks = self._base.masks(unwrap_state(state), self._params)
            joint = {g: remap_forbidden(jax.random.fold_in(key, i + 1), a, masks[g], self._base.group_actions[g])
                     for i, (g, a) in enumerate(joint.items())}
        if self._has_planner and not self.trains_planner:
            joint[self._planner_name] = self._planner(key, unwrap_state(state), self._params)
        return joint

    def _full_step(self, key, state, actions):
        """The wrapped env's step from ``{agent: action}``: ``(obs, state,
        reward, done, info)`` keyed by group, ``info`` with every entry (and
        ``"planner_reward"`` when the planner acts by policy)."""
        k_planner, k_env = jax.random.split(as_unrolled_key(key))
        joint = self.joint_actions(k_planner, state, actions)
        obs, state, reward, done, info = self._env.step(k_env, state, joint, self._params)
        if self._has_planner and not self.trains_planner:
            info = {**info, "planner_reward": reward[self._planner_name]}
        return obs, state, reward, done, info

    def _kept_info(self, info: dict) -> dict:
        """The entries of ``info`` that ``info_keys`` keeps."""
        if self.info_keys is None:
            return {k: v for k, v in info.items() if isinstance(v, _ARRAY_TYPES) and np.ndim(v) == 0}
        if self.info_keys == "all":
            return info
        return {k: info[k] for k in self.info_keys}

    def step_env(self, key, state, actions):
        """One step without reset: ``(obs, state, rewards, dones, infos)``.

        Raises:
            ValueError: ``actions`` without exactly the keys ``agents``, or an
                action that is not an integer array of its space's shape.
        """
        obs, state, reward, done, info = self._full_step(key, state, actions)
        info = self._kept_info(info)
        rewards = self.by_agent(reward)
        done = jnp.asarray(done, bool)
        dones = {a: done for a in self.agents}
        dones["__all__"] = done
        infos = jax.tree.map(lambda x: jnp.broadcast_to(x, (self.num_agents,) + jnp.shape(x)), info)
        return self._obs_dict(obs), state, rewards, dones, infos

    def step(self, key, state, actions, reset_state=None):
        """One step; when ``dones["__all__"]``, reset with carry-over (or to
        ``reset_state``). Returns ``(obs, state, rewards, dones, infos)``.

        Raises:
            ValueError: as ``step_env`` (checked before the jitted step, so
                that a dict with keys of mixed types is named too).
        """
        self._check_actions(actions)
        return self._step(key, state, actions, reset_state)

    @partial(jax.jit, static_argnums=(0,))
    def _step(self, key, state, actions, reset_state):
        key, k_reset = jax.random.split(as_unrolled_key(key))
        obs_st, state_st, rewards, dones, infos = self.step_env(key, state, actions)

        def reset():
            if reset_state is not None:
                return self.get_obs(reset_state), reset_state
            obs, state = self._env.reset(k_reset, self._params, prev_state=state_st)
            return self._obs_dict(obs), state

        obs, state = jax.lax.cond(dones["__all__"], reset, lambda: (obs_st, state_st))
        return obs, state, rewards, dones, infos

    @partial(jax.jit, static_argnums=(0,))
    def get_avail_actions(self, state) -> dict:
        """``{agent: bool mask}`` at ``state`` (shapes in the class docstring)."""
        masks = self._base.masks(unwrap_state(state), self._params)
        heads = {g.name: mask_heads(masks[g.name], self._base.group_actions[g.name]) for g in self._mobile_groups}
        if self.trains_planner:
            name = self._planner_name
            heads[name] = mask_heads(masks[name], self._base.group_actions[name])
        return self.by_agent(heads)
