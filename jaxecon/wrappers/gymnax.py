"""A gymnax front: the mobile agents of a jaxecon economy as a gymnax environment.

Follows gymnax 1.0's ``Environment`` (``gymnax.environments.environment``):
``reset(key, params) -> (obs, state)``; ``step(key, state, action, params) ->
(obs, state, reward, terminated, truncated, info)`` with the auto-reset inside
(``info`` holds ``"terminated"`` and ``"truncated"``, and on request
``"final_observation"`` and ``"action_mask"``: ``info_keys``);
``step_env``/``reset_env`` without it; ``default_params``,
``observation_space(params)``, ``action_space(params)``, ``num_actions``,
``name``. With ``step_api="legacy"``, ``step`` returns gymnax < 1.0's five
values ``(obs, state, reward, done, info)`` (``done = terminated | truncated``),
what PureJaxRL's and rejax's scripts unpack, as gymnax's
``LegacyStepAPIWrapper`` does.

When gymnax is installed, ``GymnaxEnv`` subclasses its ``Environment``;
without gymnax it has the same methods.

Two modes:

- joint (default): the mobile agents act jointly: ``obs`` float32
  ``[n_agents, obs_dim]``, ``action`` int32 ``[n_agents]`` (``[n_agents,
  n_heads]`` in multi-action mode), ``reward`` float ``[n_agents]``.
- per-agent (``agents_as_batch=True``): each mobile agent is one entry of the
  batch that ``jax.vmap`` makes, as single-agent gymnax code expects: per
  entry ``obs`` float32 ``[obs_dim]``, ``action`` int32 ``[]``, ``reward``
  float ``[]``, ``done`` bool ``[]``. Under ``jax.vmap`` over ``B`` entries
  (``B`` a multiple of ``n_agents``), entries ``e * n_agents ... e *
  n_agents + n_agents - 1`` are the agents of economy ``e``, which steps once
  with all their actions (``jax.custom_batching.custom_vmap``).

The spaces describe ONE agent in both modes, so a network built from
``observation_space(params).shape`` and ``action_space(params).n``, applied
to every agent, is parameter-shared PPO. The planner acts by
``planner_policy`` (``jaxecon.wrappers.planner``). Mask-blind code can ask
for ``invalid_actions="remap"``.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import jax
import jax.numpy as jnp
from flax import struct

from jaxecon.core.arg_checks import check_key
from jaxecon.core.backend import as_unrolled_key
from jaxecon.wrappers.base import Wrapper, unwrap_state
from jaxecon.wrappers.flat import INVALID_ACTIONS, MASK_FIELD, flat_observation, mask_heads, remap_forbidden
from jaxecon.wrappers.front import Front
from jaxecon.wrappers.library_spaces import to_library_space
from jaxecon.wrappers.planner import make_planner_policy

try:
    from gymnax.environments.environment import Environment as _GymnaxEnvironment

    GYMNAX_AVAILABLE = True
except ImportError:  # gymnax is optional (extra "jaxmarl")
    _GymnaxEnvironment = object
    GYMNAX_AVAILABLE = False

__all__ = ["DEFAULT_INFO_KEYS", "GYMNAX_AVAILABLE", "INFO_KEYS", "INVALID_ACTIONS", "STEP_APIS", "AgentState", "GymnaxEnv"]

#: ``step_api`` values: gymnax 1.0's six values, or the legacy five.
STEP_APIS = ("gymnax", "legacy")
#: The ``info`` entries handed out only when ``info_keys`` names them (one
#: row per agent, so the big ones: ``[n_agents, obs_dim]`` float32 for
#: ``"final_observation"``).
INFO_KEYS = ("action_mask", "final_observation")
#: Outputs with one row per mobile agent (per-agent mode hands each entry its row).
_PER_AGENT = ("obs", "reward")


@struct.dataclass
class AgentState:
    """The state of one batch entry in per-agent mode (``agents_as_batch=True``).

    Attributes:
        env_state: the wrapped env's state of the entry's economy; each of the
            economy's ``num_agents`` entries holds its own (equal) copy.
        agent: int32 [], the entry's mobile agent, ``0 .. num_agents - 1``
            within the acting ``group``.
    """

    env_state: Any
    agent: jax.Array


#: ``info_keys=None``: per ``step_api``, what its users read. gymnax 1.0's own
#: wrappers (``gymnax.wrappers.purerl``) read ``info["final_observation"]``,
#: which every gymnax 1.0 environment hands out; legacy-API code (PureJaxRL,
#: rejax) reads none of them and may store every step's ``info``.
DEFAULT_INFO_KEYS = {"gymnax": ("final_observation",), "legacy": ()}


def _check_info_keys(info_keys, step_api: str) -> tuple:
    """``info_keys`` as a tuple (None: ``DEFAULT_INFO_KEYS[step_api]``), or a
    TypeError / ValueError naming it and ``INFO_KEYS``."""
    if info_keys is None:
        return DEFAULT_INFO_KEYS[step_api]
    if isinstance(info_keys, str) or not isinstance(info_keys, (tuple, list, set, frozenset)):
        raise TypeError(f"info_keys must be None or a tuple of names from {INFO_KEYS}, got {info_keys!r}")
    unknown = [k for k in info_keys if k not in INFO_KEYS]
    if unknown:
        raise ValueError(f"info_keys must name entries from {INFO_KEYS}, got unknown {unknown!r}")
    return tuple(k for k in INFO_KEYS if k in info_keys)


def _split(out: dict) -> tuple:
    """``(per_agent, shared)`` of a joint output dict: the leaves with one row per
    agent (``obs``, ``reward``, ``info``'s ``INFO_KEYS``) and the others."""
    info = dict(out.get("info", {}))
    per_agent = {k: out[k] for k in _PER_AGENT if k in out}
    shared = {k: v for k, v in out.items() if k not in _PER_AGENT}
    if "info" in out:
        per_agent["info"] = {k: info.pop(k) for k in INFO_KEYS if k in info}
        shared["info"] = info
    return per_agent, shared


def _merge(per_agent: dict, shared: dict, agent) -> dict:
    """One entry's output dict from its agent's rows, its economy's shared
    values and its agent index (``_split`` undone)."""
    out = {**shared, **per_agent, "state": AgentState(shared["state"], agent)}
    if "info" in shared:
        out["info"] = {**shared["info"], **per_agent["info"]}
    return out


class GymnaxEnv(Front, _GymnaxEnvironment):
    """The mobile agents of a jaxecon economy as a gymnax environment.

    Args:
        env: a jaxecon functional env (``jaxecon.make``) or a ``Wrapper`` of one
            (e.g. ``LogWrapper(env)``), not auto-resetting, with
            ``flatten_masks=True``.
        planner_policy: what the planner does each step: ``"noop"`` (default),
            ``"random"``, fixed planner actions (int32 of the planner's action
            shape, e.g. one per tax bracket), or a callable ``(key,
            planner_obs, state) -> planner action``; see
            ``jaxecon.wrappers.planner``.
            In an economy without a planner (``n_planners=0``) only ``"noop"``
            (the default) is allowed, and ``info`` has no planner entries.
        step_api: ``"gymnax"`` (default: six values) or ``"legacy"`` (five).
        group: the mobile-agent group that acts (``env.group_names``); needed
            only when the economy declares several mobile-agent types, whose
            other groups then send NO-OP every step.
        agents_as_batch: ``False`` (default): joint mode; ``True``: per-agent
            mode, each mobile agent one entry of the ``jax.vmap`` batch (below).
        invalid_actions: what an action the mask forbids does: ``"noop"``
            (default, Foundation's rule: it is a NO-OP) or ``"remap"`` (it is
            replaced by a uniformly random action the mask allows, NO-OP
            included, drawn per agent (per head in multi-action mode) with
            ``jax.random.fold_in(key, 1)`` of ``step_env``'s ``key``; out-of-range
            actions count as forbidden). For mask-blind learners, which
            otherwise learn that most actions do nothing.
        info_keys: the large per-agent ``info`` entries to hand out, a tuple
            from ``INFO_KEYS``: ``"action_mask"``, ``"final_observation"``.
            Default None: ``DEFAULT_INFO_KEYS[step_api]``, i.e.
            ``("final_observation",)`` with ``step_api="gymnax"`` (gymnax
            1.0's contract; its own wrappers read it) and ``()`` with
            ``"legacy"`` (``info`` then holds only small per-economy values,
            what PureJaxRL or rejax, storing every step's ``info``, can afford).
    Raises:
        TypeError: ``env`` is not a jaxecon env/wrapper or already auto-resets;
            ``agents_as_batch`` is not a bool; ``info_keys`` is not None or a tuple;
            ``key`` (``reset``, ``step``) is not one PRNG key (when traced).
        ValueError: ``flatten_masks=False``, an unknown ``planner_policy``,
            ``step_api``, ``group``, ``invalid_actions`` or ``info_keys`` entry
            (the message lists the allowed values).

    Joint mode (``n`` = num_agents, the agents of ``group``): ``obs`` float32
    [n, obs_dim] (each agent's observation fields except ``"action_mask"``,
    flattened and concatenated in sorted field order;
    ``jaxecon.wrappers.flat``); ``action`` int32 [n] (or [n, n_heads]);
    ``reward`` float [n]; ``terminated`` bool [] (always False); ``truncated``
    bool [] (the time limit). ``state`` is the wrapped env's state. ``info``
    holds the wrapped env's info plus ``"planner_action"``,
    ``"planner_reward"`` (float []), and from ``step``: ``"terminated"``,
    ``"truncated"``; with ``info_keys``: ``"action_mask"`` (bool [n,
    n_actions], or [n, n_heads, max_dim] in multi-action mode: the mask that
    goes with the returned ``obs``, after any reset) and, from ``step``,
    ``"final_observation"`` (float32 [n, obs_dim], before the reset).
    ``action_mask(state, params)`` gives the mask at any state.

    Per-agent mode (``agents_as_batch=True``): ``reset``, ``step``,
    ``reset_env``, ``step_env`` and ``action_mask`` are written for ONE batch
    entry and meant to be called under ``jax.vmap`` (as PureJaxRL, rejax and
    gymnax's own wrappers do: ``jax.vmap(env.step, in_axes=(0, 0, 0,
    None))``). Per entry: ``obs`` float32 [obs_dim], ``action`` int32 [] (or
    [n_heads]), ``reward`` float [], ``terminated``/``truncated``/``done`` bool
    [] (its economy's), ``state`` an ``AgentState`` (its economy's state and
    its agent index), ``info`` its economy's values, and its agent's row of
    ``"action_mask"``/``"final_observation"`` when asked for;
    ``action_mask(state)`` bool [n_actions]. Under ``jax.vmap`` over ``B``
    entries, ``B`` must be a multiple of ``num_agents`` (else ``ValueError``
    when traced): entry ``b`` is agent ``b % num_agents`` of economy ``b //
    num_agents``, which steps once with its entries' actions and the key of
    its first entry (the other entries' keys are unused; likewise its first
    entry's state and params). Nested ``jax.vmap`` (e.g. over seeds) works;
    the innermost vmap over entries groups the economies. Each entry holds a
    copy of its economy's state, ``num_agents`` copies per economy: fine for
    small economies, for large ones prefer joint mode. Outside ``jax.vmap``
    a call is one entry alone: ``reset`` gives agent 0's entry of a fresh
    economy; ``step`` applies the entry's action for its agent and NO-OP for
    the economy's other agents.

    The auto-reset calls ``env.reset(key, params, prev_state=final_state)``
    (what Foundation keeps across episodes carries over) under
    ``jax.lax.cond``. Keys: ``step`` splits ``k_step, k_reset``; ``step_env``
    splits ``k_step`` into the planner's key and the env step's key.
    """

    def __init__(self, env, planner_policy="noop", step_api: str = "gymnax", group=None, *,
                 agents_as_batch: bool = False, invalid_actions: str = "noop", info_keys=None):
        base = env.unwrapped if isinstance(env, Wrapper) else env
        mobile = tuple(g.name for g in getattr(base, "mobile_groups", ()))
        if group is None and len(mobile) > 1:
            raise ValueError(f"group must name the mobile-agent group that acts, one of {mobile} "
                             "(the economy has several mobile-agent types)")
        if mobile and group is not None and group not in mobile:
            raise ValueError(f"group must be one of the mobile-agent groups {mobile}, got {group!r}")
        self.group = mobile[0] if group is None and mobile else group
        self._observation_space = to_library_space(self._wrap(env, (self.group,))[self.group], "gymnax")
        if step_api not in STEP_APIS:
            raise ValueError(f"step_api must be one of {STEP_APIS}, got {step_api!r}")
        if not isinstance(agents_as_batch, bool):
            raise TypeError(f"agents_as_batch must be True or False, got {agents_as_batch!r}")
        if not isinstance(invalid_actions, str) or invalid_actions not in INVALID_ACTIONS:
            raise ValueError(f"invalid_actions must be one of {INVALID_ACTIONS}, got {invalid_actions!r}")
        self.step_api = step_api
        self.agents_as_batch = agents_as_batch
        self.invalid_actions = invalid_actions
        self.info_keys = _check_info_keys(info_keys, step_api)
        planner = self._base.planner_group
        if planner is None and not (isinstance(planner_policy, str) and planner_policy == "noop"):
            raise ValueError(f"planner_policy must be 'noop': the economy has no planner (n_planners=0), "
                             f"got {planner_policy!r}")
        self._planner = None if planner is None else make_planner_policy(self._base, planner_policy)
        self._acting = next(g for g in self._base.mobile_groups if g.name == self.group)
        self._layout = self._base.group_actions[self.group]
        self._action_space = to_library_space(self._base.action_space(self.group), "gymnax")
        self._reset_entry = self._entrywise(self._joint_reset)
        self._step_env_entry = self._entrywise(self._joint_step_env)
        self._step_entry = self._entrywise(self._joint_step)

    # ------------------------------------------------------------ structure
    @property
    def default_params(self):
        """The wrapped env's ``EnvParams`` (``env.default_params``)."""
        return self._env.default_params

    @property
    def num_agents(self) -> int:
        """Mobile agents of one economy (those of ``group``): the leading axis
        of obs, action and reward in joint mode, the entries per economy in
        per-agent mode."""
        return self._acting.count

    @property
    def num_actions(self):
        """One agent's number of actions (single-action mode), or the tuple of
        its heads' sizes (multi-action mode)."""
        layout = self._layout
        return tuple(int(d) for d in layout.dims) if layout.multi_action_mode else layout.n_actions

    def observation_space(self, params=None):
        """One agent's flat observation: a ``Box`` float32 [obs_dim], bounds
        from ``env.observation_space(group)``; gymnax's own ``Box`` when gymnax
        is installed (``jaxecon.wrappers.library_spaces``), else
        ``jaxecon.spaces.Box``. ``params`` is accepted for gymnax's signature;
        the space does not depend on it."""
        return self._observation_space

    def action_space(self, params=None):
        """One agent's action: ``Discrete(n_actions)`` (gymnax's when installed)
        or ``MultiDiscrete(dims)`` (jaxecon's: gymnax has none), as
        ``env.action_space(group)``."""
        return self._action_space

    # ------------------------------------------------------------ checks
    def _check_state(self, state) -> None:
        """Per-agent mode: raise ``TypeError`` unless ``state`` is an ``AgentState``."""
        if self.agents_as_batch and not isinstance(state, AgentState):
            raise TypeError("state must be the AgentState that reset returns in per-agent mode "
                            f"(agents_as_batch=True), got {type(state).__qualname__}")

    def _check_step(self, key, state, action, params) -> None:
        """The checks of ``step``/``step_env``, at trace time."""
        check_key(key, "key")
        shape = self.action_space().shape
        self._check_action(action, shape if self.agents_as_batch else (self.num_agents,) + shape, "action")
        self._base.check_params(params)
        self._check_state(state)

    # ------------------------------------------------------------ joint mode
    def _flat(self, obs) -> jax.Array:
        """float32 [n, obs_dim] of the env's observation."""
        return flat_observation(obs[self.group], 1)

    def _mask(self, obs, state, params) -> jax.Array:
        """The mask heads (``flat.mask_heads``) that go with ``obs`` at ``state``."""
        group = obs[self.group]
        if isinstance(group, dict) and MASK_FIELD in group:
            flat_mask = group[MASK_FIELD]
        else:
            flat_mask = self._base.masks(unwrap_state(state), params)[self.group]
        return mask_heads(flat_mask, self._layout)

    def _joint_mask(self, state, params) -> jax.Array:
        """bool [n, n_actions] (or [n, n_heads, max_dim]) at the wrapped env's ``state``."""
        return mask_heads(self._base.masks(unwrap_state(state), params)[self.group], self._layout)

    def _remap(self, key, state, action, params) -> jax.Array:
        """``action`` (int32 [n] or [n, n_heads]) with every action the mask at
        ``state`` forbids, or out of range, replaced by a uniformly random allowed one."""
        flat_mask = self._base.masks(unwrap_state(state), params)[self.group]
        return remap_forbidden(key, action, flat_mask, self._layout)

    def _joint_reset(self, key, state, action, params) -> dict:
        """A fresh episode of one economy: ``{"obs", "state"}`` (``state`` and
        ``action`` unused: ``_entrywise``'s signature)."""
        obs, env_state = self._env.reset(as_unrolled_key(key), params)
        return {"obs": self._flat(obs), "state": env_state}

    def _joint_step_env(self, key, state, action, params) -> dict:
        """One step of one economy, without reset: ``{"obs", "state", "reward",
        "terminated", "info"}``, joint shapes."""
        key = as_unrolled_key(key)
        k_planner, k_env = jax.random.split(key)
        action = jnp.asarray(action, jnp.int32)
        if self.invalid_actions == "remap":
            action = self._remap(jax.random.fold_in(key, 1), state, action, params)
        actions = {self.group: action}  # other groups: NO-OP
        planner = self._base.planner_group
        if planner is not None:
            actions[planner.name] = self._planner(k_planner, unwrap_state(state), params)
        obs, state, reward, _, info = self._env.step(k_env, state, actions, params)
        info = dict(info)
        if "action_mask" in self.info_keys:
            info["action_mask"] = self._mask(obs, state, params)
        if planner is not None:
            info.update(planner_action=actions[planner.name], planner_reward=reward[planner.name])
        return {"obs": self._flat(obs), "state": state, "reward": reward[self.group],
                "terminated": self.is_terminated(state, params), "info": info}

    def _joint_step(self, key, state, action, params) -> dict:
        """One step of one economy with auto-reset: ``_joint_step_env``'s dict
        plus ``"truncated"``, ``info`` with the reset entries."""
        k_step, k_reset = jax.random.split(as_unrolled_key(key))
        out = self._joint_step_env(k_step, state, action, params)
        obs_st, state_st, info = out["obs"], out["state"], out["info"]
        truncated = self.is_truncated(state_st, params)
        with_mask = "action_mask" in self.info_keys

        def reset():
            obs, state = self._env.reset(k_reset, params, prev_state=state_st)
            return self._flat(obs), (self._mask(obs, state, params) if with_mask else None), state

        obs, mask, state = jax.lax.cond(out["terminated"] | truncated, reset,
                                        lambda: (obs_st, info.get("action_mask"), state_st))
        info = {**info, "terminated": out["terminated"], "truncated": truncated}
        if with_mask:
            info["action_mask"] = mask
        if "final_observation" in self.info_keys:
            info["final_observation"] = obs_st
        return {**out, "obs": obs, "state": state, "truncated": truncated, "info": info}

    # ------------------------------------------------------------ per-agent mode
    def _entrywise(self, joint):
        """``joint(key, env_state, action, params) -> dict`` (one economy, joint
        shapes) as a function of one batch entry, ``(key, AgentState or None,
        action [] or None, params) -> dict``, batched by ``jax.custom_batching.custom_vmap``.

        Under ``jax.vmap`` over ``B`` entries, the rule groups them as
        ``[B // n, n]`` economies, calls ``jax.vmap(joint)`` over the economies
        (each with its first entry's key, env state and params, and all its
        entries' actions), and hands entry ``b`` row ``b % n`` of the per-agent
        outputs and a copy of the shared ones. Alone (not under vmap), the entry
        is its state's agent (agent 0 for a reset) and the others send NO-OP.

        Raises:
            ValueError: under ``jax.vmap``, ``B`` is not a multiple of ``num_agents``.
        """
        n = self.num_agents
        idle = jnp.zeros((n,) + self.action_space().shape, jnp.int32)

        def alone(key, state, action, params):
            if state is None:
                agent, env_state, actions = jnp.zeros((), jnp.int32), None, None
            else:
                agent, env_state = state.agent, state.env_state
                actions = idle.at[agent].set(jnp.asarray(action, jnp.int32))
            per_agent, shared = _split(joint(key, env_state, actions, params))
            return _merge(jax.tree.map(lambda x: x[agent], per_agent), shared, agent)

        entry = jax.custom_batching.custom_vmap(alone)

        @entry.def_vmap
        def rule(axis_size, in_batched, key, state, action, params):
            if axis_size % n:
                raise ValueError(
                    f"agents_as_batch=True: jax.vmap over the entries must have a multiple of num_agents={n} "
                    f"entries (num_agents per economy), got {axis_size}")
            economies = axis_size // n
            key_b, state_b, action_b, params_b = in_batched

            def first(x, batched):
                return x.reshape((economies, n) + x.shape[1:])[:, 0] if batched else x

            def axes(batched_tree):
                return jax.tree.map(lambda b: 0 if b else None, batched_tree)

            env_state, env_state_axes = None, None
            if state is not None:
                env_state = jax.tree.map(first, state.env_state, state_b.env_state)
                env_state_axes = axes(state_b.env_state)
            actions, actions_axis = None, None
            if action is not None:
                actions = (action.reshape((economies, n) + action.shape[1:]) if action_b
                           else jnp.broadcast_to(action, (n,) + jnp.shape(action)))
                actions_axis = 0 if action_b else None
            out = jax.vmap(joint, in_axes=(axes(key_b), env_state_axes, actions_axis, axes(params_b)),
                           axis_size=economies)(
                jax.tree.map(first, key, key_b), env_state, actions, jax.tree.map(first, params, params_b))
            per_agent, shared = _split(out)
            per_agent = jax.tree.map(lambda x: x.reshape((axis_size,) + x.shape[2:]), per_agent)
            shared = jax.tree.map(lambda x: jnp.repeat(x, n, axis=0), shared)
            merged = _merge(per_agent, shared, jnp.tile(jnp.arange(n, dtype=jnp.int32), economies))
            return merged, jax.tree.map(lambda _: True, merged)

        return entry

    # ------------------------------------------------------------ functions
    def action_mask(self, state, params=None):
        """The action mask at ``state``: joint mode bool [n, n_actions] (or
        [n, n_heads, max_dim]); per-agent mode the entry's agent's row, bool
        [n_actions] (or [n_heads, max_dim]) (``flat.mask_heads``).

        Raises (at trace time, as ``step``):
            TypeError: per-agent mode and ``state`` is not an ``AgentState``;
                ``state`` holds no ``EnvState``; ``params`` are not ``EnvParams``.
            ValueError: a state or params of another economy (the message
                names the leaves that differ and both economies).
        """
        params = self.default_params if params is None else params
        self._check_state(state)
        self._base.check_state(unwrap_state(state.env_state if self.agents_as_batch else state))
        self._base.check_params(params)
        if self.agents_as_batch:
            return self._joint_mask(state.env_state, params)[state.agent]
        return self._joint_mask(state, params)

    def reset_env(self, key, params):
        """``(obs, state)`` of a fresh episode: joint mode obs float32 [n,
        obs_dim] and the wrapped env's state; per-agent mode one entry's obs
        float32 [obs_dim] and ``AgentState``.

        Raises:
            TypeError / ValueError: ``params`` that are not the env's
                (``Economy.check_params``).
        """
        check_key(key, "key")
        self._base.check_params(params)
        out = (self._reset_entry if self.agents_as_batch else self._joint_reset)(key, None, None, params)
        return out["obs"], out["state"]

    @partial(jax.jit, static_argnames=("self",))
    def reset(self, key, params=None):
        """``reset_env`` with ``params`` defaulting to ``default_params``."""
        params = self.default_params if params is None else params
        return self.reset_env(key, params)

    def step_env(self, key, state, action, params):
        """One step without reset: ``(obs, state, reward, terminated, info)``
        (gymnax's ``step_env``); ``info`` without the reset keys.

        Raises:
            ValueError: ``action`` is not an integer array of shape
                ``(num_agents,) + action_space().shape`` (per-agent mode:
                ``action_space().shape``).
            TypeError: per-agent mode and ``state`` is not an ``AgentState``.
            TypeError / ValueError: ``params`` that are not the env's.
        """
        self._check_step(key, state, action, params)
        out = (self._step_env_entry if self.agents_as_batch else self._joint_step_env)(key, state, action, params)
        return out["obs"], out["state"], out["reward"], out["terminated"], out["info"]

    def is_terminated(self, state, params) -> jax.Array:
        """bool []: always False (Foundation episodes end only by time limit)."""
        return jnp.zeros((), bool)

    def is_truncated(self, state, params) -> jax.Array:
        """bool []: ``timestep >= episode_length``."""
        return unwrap_state(state).timestep >= self._base.episode_length

    @partial(jax.jit, static_argnames=("self",))
    def step(self, key, state, action, params=None):
        """One step with auto-reset (see the class docstring).

        Returns:
            ``step_api="gymnax"``: ``(obs, state, reward, terminated, truncated, info)``;
            ``"legacy"``: ``(obs, state, reward, done, info)``.
        Raises:
            as ``step_env``.
        """
        params = self.default_params if params is None else params
        self._check_step(key, state, action, params)
        out = (self._step_entry if self.agents_as_batch else self._joint_step)(key, state, action, params)
        if self.step_api == "legacy":
            return out["obs"], out["state"], out["reward"], out["terminated"] | out["truncated"], out["info"]
        return out["obs"], out["state"], out["reward"], out["terminated"], out["truncated"], out["info"]
