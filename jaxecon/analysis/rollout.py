"""Episodes as one pure function: reset, then a ``lax.scan`` over steps.

Actions come either from a fixed action sequence (open-loop) or from a policy
function ``policy(key, obs, params) -> actions`` (closed-loop). Everything is
jittable, vmappable and differentiable with respect to ``EnvParams`` (see
``jaxecon.analysis.gradients``). The scan itself is ``jaxecon.rollout``'s,
the one every caller shares. The step/reset order is Foundation's
(``ai_economist/foundation/base/base_env.py``), as in ``jaxecon.core.env``.

Usage::

    from jaxecon.analysis import rollout
    out = jax.jit(lambda k, p: rollout(env, k, p, actions=acts))(key, params)
    out.state            # EnvState after the last step
    out.rewards["p"]     # float [T] planner rewards
"""

from __future__ import annotations

from typing import Callable, Optional

import jax
import jax.numpy as jnp
from flax import struct

from jaxecon.core.state import EnvParams, EnvState
from jaxecon.rollout import check_action_sequence, check_n_steps, episode

#: ``policy(key, obs, params) -> {"a": int32 [...], "p": int32 [...]}``.
Policy = Callable[[jax.Array, dict, EnvParams], dict]


@struct.dataclass
class Rollout:
    """One simulated episode (or part of one).

    Attributes (T = number of steps, n = n_agents; float = float32, or float64
    under ``jax_enable_x64``):
        initial_state: EnvState right after reset.
        state: EnvState after the last step.
        rewards: ``{"a": float [T, n], "p": float [T]}`` per-step rewards
            (utility units; the scenario's marginal optimization metric).
        done: bool [T].
        info: dict of float [T] per-step ``info`` entries.
    """

    initial_state: EnvState
    state: EnvState
    rewards: dict
    done: jax.Array
    info: dict

    @property
    def returns(self) -> dict:
        """Undiscounted returns ``{"a": float [n], "p": float []}`` (sum of rewards;
        one entry per group of the env)."""
        return {g: jnp.sum(r, axis=0) for g, r in self.rewards.items()}


def check_action_source(actions, policy) -> None:
    """Raise ``ValueError`` unless exactly one of ``actions`` / ``policy`` is given."""
    if (actions is None) == (policy is None):
        raise ValueError("give exactly one of actions= (a fixed sequence) or policy= (a function)")


def _rewards_done_info(state, actions, reward, done, info):
    return reward, done, info


def rollout(
    env,
    key: jax.Array,
    params: EnvParams,
    *,
    actions: Optional[dict] = None,
    policy: Optional[Policy] = None,
    n_steps: Optional[int] = None,
    completions=0,
) -> Rollout:
    """Reset and step ``env`` for ``n_steps`` steps inside one ``lax.scan``.

    ``jaxecon.rollout.episode`` with a recorder of the rewards, ``done`` and
    ``info``: the reset uses one half of ``key``, the steps the other (split
    per step).

    Args:
        env: an environment from ``jaxecon.make``.
        key: PRNG key; the reset uses one half, the steps the other (split per step).
        params: ``EnvParams`` (may be traced: differentiate or vmap over it).
        actions: fixed action sequence ``{"a": int [T, n_agents, ...], "p": int
            [T, ...]}`` (a missing entry = NO-OP throughout); exclusive with ``policy``.
        policy: ``policy(key, obs, params) -> actions`` called every step.
            Its integer actions carry no gradient (see docs/differentiability.md).
        n_steps: number of steps T (static int); default ``env.episode_length``.
        completions: episodes completed before this one (drives annealing).
    Returns:
        ``Rollout``.
    Raises:
        ValueError: both or neither of ``actions``/``policy`` given, bad
            ``n_steps``, or an action sequence of the wrong shape or dtype.
    """
    check_action_source(actions, policy)
    n_steps = check_n_steps(env.episode_length if n_steps is None else n_steps)
    if actions is not None:
        actions = check_action_sequence(env, actions, n_steps)
        step_policy = None
    elif not callable(policy):
        raise ValueError(f"policy must be callable as policy(key, obs, params), got {policy!r}")
    else:
        def step_policy(k, obs, state):
            return policy(k, obs, params)

    state0, carry, (rew, done, info) = episode(
        env, key, params, n_steps, policy=step_policy, actions=actions,
        recorder=_rewards_done_info, completions=completions,
    )
    return Rollout(initial_state=state0, state=carry.state, rewards=rew, done=done, info=info)


def make_rollout_fn(env, *, policy: Optional[Policy] = None, n_steps: Optional[int] = None, jit: bool = True):
    """A (jitted) ``fn(key, params, actions=None) -> Rollout`` for repeated calls.

    With ``policy`` given, ``fn(key, params)``; otherwise ``fn(key, params, actions)``.
    """
    if policy is not None:
        def fn(key, params):
            return rollout(env, key, params, policy=policy, n_steps=n_steps)
    else:
        def fn(key, params, actions):
            return rollout(env, key, params, actions=actions, n_steps=n_steps)
    return jax.jit(fn) if jit else fn
