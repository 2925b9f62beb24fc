"""A gymnax front: the mobile agents as one gymnax environment.

Follows gymnax 1.0's ``Environment`` (``gymnax.environments.environment``):
``reset(key, params) -> (obs, state)``; ``step(key, state, action, params) ->
(obs, state, reward, terminated, truncated, info)`` with the auto-reset inside
(``info`` holds ``"terminated"``, ``"truncated"`` and ``"final_observation"``);
``step_env``/``reset_env`` without it; ``default_params``,
``observation_space(params)``, ``action_space(params)``, ``num_actions``,
``name``. With ``step_api="legacy"``, ``step`` returns gymnax < 1.0's five
values ``(obs, state, reward, done, info)`` (``done = terminated | truncated``),
what PureJaxRL's scripts unpack, as gymnax's ``LegacyStepAPIWrapper`` does.

When gymnax is installed, ``GymnaxEnv`` subclasses its ``Environment``;
without gymnax it has the same methods.

The mobile agents act jointly: ``obs`` float32 ``[n_agents, obs_dim]``,
``action`` int32 ``[n_agents]`` (``[n_agents, n_heads]`` in multi-action
mode), ``reward`` float ``[n_agents]``. The spaces describe ONE agent (the
leading ``n_agents`` axis is implicit), so a network built from
``observation_space(params).shape`` and ``action_space(params).n``, applied
to every agent, is parameter-shared PPO. The planner acts by
``planner_policy`` (``jaxecon.wrappers.planner``).
"""

from __future__ import annotations

from functools import partial

import jax
import jax.numpy as jnp

from jaxecon.wrappers.base import Wrapper, unwrap_state
from jaxecon.wrappers.flat import MASK_FIELD, flat_observation, mask_heads
from jaxecon.wrappers.front import Front
from jaxecon.wrappers.library_spaces import to_library_space
from jaxecon.wrappers.planner import make_planner_policy

try:
    from gymnax.environments.environment import Environment as _GymnaxEnvironment

    GYMNAX_AVAILABLE = True
except ImportError:  # gymnax is optional (extra "jaxmarl")
    _GymnaxEnvironment = object
    GYMNAX_AVAILABLE = False

__all__ = ["GYMNAX_AVAILABLE", "STEP_APIS", "GymnaxEnv"]

#: ``step_api`` values: gymnax 1.0's six values, or the legacy five.
STEP_APIS = ("gymnax", "legacy")


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
    Raises:
        TypeError: ``env`` is not a jaxecon env/wrapper or already auto-resets.
        ValueError: ``flatten_masks=False``, an unknown ``planner_policy``,
            ``step_api`` or ``group`` (the message lists the allowed values).

    Shapes (``n`` = num_agents, the agents of ``group``): ``obs`` float32 [n, obs_dim] (each agent's
    observation fields except ``"action_mask"``, flattened and concatenated
    in sorted field order; ``jaxecon.wrappers.flat``); ``action`` int32 [n]
    (or [n, n_heads]); ``reward`` float [n]; ``terminated`` bool [] (always
    False); ``truncated`` bool [] (the time limit). ``state`` is the wrapped
    env's state. ``info`` holds the wrapped env's info plus
    ``"action_mask"`` (bool [n, n_actions], or [n, n_heads, max_dim] in
    multi-action mode: the mask that goes with the returned ``obs``, after
    any reset), ``"planner_action"``, ``"planner_reward"`` (float []), and
    from ``step``: ``"terminated"``, ``"truncated"``, ``"final_observation"``
    (float32 [n, obs_dim], before the reset). After ``reset`` the mask is
    ``action_mask(state, params)``.

    The auto-reset calls ``env.reset(key, params, prev_state=final_state)``
    (what Foundation keeps across episodes carries over) under
    ``jax.lax.cond``. Keys: ``step`` splits ``k_step, k_reset``; ``step_env``
    splits ``k_step`` into the planner's key and the env step's key.
    """

    def __init__(self, env, planner_policy="noop", step_api: str = "gymnax", group=None):
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
        self.step_api = step_api
        planner = self._base.planner_group
        if planner is None and not (isinstance(planner_policy, str) and planner_policy == "noop"):
            raise ValueError(f"planner_policy must be 'noop': the economy has no planner (n_planners=0), "
                             f"got {planner_policy!r}")
        self._planner = None if planner is None else make_planner_policy(self._base, planner_policy)
        self._acting = next(g for g in self._base.mobile_groups if g.name == self.group)
        self._action_space = to_library_space(self._base.action_space(self.group), "gymnax")

    # ------------------------------------------------------------ structure
    @property
    def default_params(self):
        """The wrapped env's ``EnvParams`` (``env.default_params``)."""
        return self._env.default_params

    @property
    def num_agents(self) -> int:
        """Mobile agents acting jointly (the leading axis of obs, action, reward):
        those of ``group``."""
        return self._acting.count

    @property
    def num_actions(self):
        """One agent's number of actions (single-action mode), or the tuple of
        its heads' sizes (multi-action mode)."""
        layout = self._base.group_actions[self.group]
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

    # ------------------------------------------------------------ functions
    def _view(self, obs, state, params):
        """(float32 [n, obs_dim], mask heads) of the env's observation."""
        group = obs[self.group]
        if isinstance(group, dict) and MASK_FIELD in group:
            flat_mask = group[MASK_FIELD]
        else:
            flat_mask = self._base.masks(unwrap_state(state), params)[self.group]
        return flat_observation(group, 1), mask_heads(flat_mask, self._base.group_actions[self.group])

    def action_mask(self, state, params=None):
        """bool [n, n_actions] (or [n, n_heads, max_dim]): the mobile agents'
        action mask at ``state`` (``flat.mask_heads``)."""
        params = self.default_params if params is None else params
        flat_mask = self._base.masks(unwrap_state(state), params)[self.group]
        return mask_heads(flat_mask, self._base.group_actions[self.group])

    def reset_env(self, key, params):
        """``(obs float32 [n, obs_dim], state)`` of a fresh episode.

        Raises:
            TypeError / ValueError: ``params`` that are not the env's
                (``Economy.check_params``).
        """
        self._base.check_params(params)
        obs, state = self._env.reset(key, params)
        return self._view(obs, state, params)[0], state

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
                ``(num_agents,) + action_space().shape``.
            TypeError / ValueError: ``params`` that are not the env's.
        """
        self._check_action(action, (self.num_agents,) + self.action_space().shape, "action")
        self._base.check_params(params)
        k_planner, k_env = jax.random.split(key)
        actions = {self.group: jnp.asarray(action, jnp.int32)}  # other groups: NO-OP
        planner = self._base.planner_group
        if planner is not None:
            actions[planner.name] = self._planner(k_planner, unwrap_state(state), params)
        obs, state, reward, _, info = self._env.step(k_env, state, actions, params)
        flat, mask = self._view(obs, state, params)
        info = {**info, "action_mask": mask}
        if planner is not None:
            info.update(planner_action=actions[planner.name], planner_reward=reward[planner.name])
        return flat, state, reward[self.group], self.is_terminated(state, params), info

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
        """
        params = self.default_params if params is None else params
        k_step, k_reset = jax.random.split(key)
        obs_st, state_st, reward, terminated, info = self.step_env(k_step, state, action, params)
        truncated = self.is_truncated(state_st, params)
        done = terminated | truncated

        def reset():
            obs, state = self._env.reset(k_reset, params, prev_state=state_st)
            return (*self._view(obs, state, params), state)

        obs, mask, state = jax.lax.cond(done, reset, lambda: (obs_st, info["action_mask"], state_st))
        info = {**info, "action_mask": mask, "terminated": terminated, "truncated": truncated,
                "final_observation": obs_st}
        if self.step_api == "legacy":
            return obs, state, reward, done, info
        return obs, state, reward, terminated, truncated, info
