"""The planner's policy when only the mobile agents are trained.

Foundation's two-level training (Zheng et al., "The AI Economist") first trains
the mobile agents under a fixed tax policy (no taxes, or fixed rates), then the
planner. ``GymnaxEnv`` and ``MultiAgentEnv`` (unless given
``planner_policy=None``) expose only the mobile agents; the planner's action
each step comes from the policy made here (both default to ``"noop"``):

- ``"noop"``: action 0 in every head (Foundation's NO-OP; a
  ``PeriodicBracketTax`` planner keeps its rate indices, which start at 0
  (rate 0) each episode);
- ``"random"``: uniformly random among the actions its mask allows
  (``ActionLayout.sample``);
- fixed actions, an int or a sequence of ints of the planner's action shape:
  e.g. one action per tax bracket, where action ``k >= 1`` selects rate index
  ``k - 1`` of ``PeriodicBracketTax``'s rate table (0, 0.05, ..., 1 by
  default), so ``[3] * 7`` sets a 10% rate in every bracket;
- a callable ``policy(key, planner_obs, state) -> planner action``, with
  ``planner_obs`` the env's observation of the planner's group
  (``env.planner_group``; Foundation's ``obs["p"]``) at ``state`` (the
  observation the planner would see before this step) and ``state`` the
  ``EnvState``.
"""

from __future__ import annotations

from typing import Callable

import jax.numpy as jnp
import numpy as np

from jaxecon.core.env import Economy

__all__ = ["PLANNER_POLICIES", "make_planner_policy"]

#: The named planner policies; a fixed action array or a callable is also accepted.
PLANNER_POLICIES = ("noop", "random")


def make_planner_policy(env: Economy, planner_policy) -> Callable:
    """``act(key, state, params) -> int32 planner action`` for ``planner_policy``.

    Args:
        env: the jaxecon functional env (``wrapper.unwrapped``).
        planner_policy: ``"noop"``, ``"random"``, an int / int sequence of the
            planner's action shape (``env.planner_actions.action_shape``: ``()``
            single-action, ``(n_heads,)`` multi-action) within the action
            space, or a callable ``(key, planner_obs, state) -> action``.
    Returns:
        ``act``: pure and jittable; its result has the planner's action shape
        and dtype int32.
    Raises:
        ValueError: an unknown name, or fixed actions of the wrong shape, not
            integers, or outside the planner's action space
            (``env.action_space`` of ``env.planner_group``; the message names
            ``planner_policy`` and the allowed values); ``"random"``, fixed
            actions or a callable in an economy without a planner or with
            several (``env.planner_group``).
    """
    layout = env.planner_actions
    shape = layout.action_shape
    if isinstance(planner_policy, str):
        if planner_policy == "noop":
            return lambda key, state, params: jnp.zeros(shape, jnp.int32)
        if planner_policy == "random":
            return lambda key, state, params: layout.sample(key, _planner_mask(env, state, params))
        raise ValueError(
            f"planner_policy must be one of {PLANNER_POLICIES}, fixed planner actions "
            f"(int32 of shape {shape}), or a callable (key, planner_obs, state) -> action; "
            f"got {planner_policy!r}"
        )
    if callable(planner_policy):
        return _callable_policy(env, planner_policy, shape)
    return _fixed_policy(env, planner_policy, shape)


def _planner_name(env) -> str:
    """The name of ``env``'s planner group (Foundation's ``"p"``).

    Raises:
        ValueError: an economy without a planner, or with several (``env.planner_group``).
    """
    group = env.planner_group
    if group is None:
        raise ValueError("planner_policy: this economy has no planner (n_planners=0); only \"noop\" applies")
    return group.name


def _planner_mask(env, state, params):
    if env.flatten_masks:
        return env.masks(state, params)[_planner_name(env)]
    raise ValueError('planner_policy="random" needs an env built with flatten_masks=True')


def _fixed_policy(env, actions, shape):
    arr = np.asarray(actions)
    if arr.dtype == object or not np.issubdtype(arr.dtype, np.integer) or arr.shape != shape:
        raise ValueError(
            f"planner_policy: fixed planner actions must be integers of shape {shape} "
            f"(the planner's action shape), got {actions!r}; or use one of {PLANNER_POLICIES}"
        )
    space = env.action_space(_planner_name(env))
    if not bool(space.contains(arr)):
        raise ValueError(f"planner_policy: fixed planner actions {arr.tolist()} are outside {space}")
    fixed = jnp.asarray(arr, jnp.int32)
    return lambda key, state, params: fixed


def _callable_policy(env, policy, shape):
    name = _planner_name(env)

    def act(key, state, params):
        action = jnp.asarray(policy(key, env.observe(state, params)[name], state))
        if action.shape != shape or not jnp.issubdtype(action.dtype, jnp.integer):
            raise ValueError(
                f"planner_policy returned an action of shape {action.shape} and dtype {action.dtype}; "
                f"the planner's action is an integer array of shape {shape}"
            )
        return action.astype(jnp.int32)

    return act

