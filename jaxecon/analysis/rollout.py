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
import numpy as np
from flax import struct

from jaxecon.core.state import EnvParams, EnvState
from jaxecon.env_checks import check_economy
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


def check_action_values(env, actions) -> None:
    """Raise for an action outside its group's allowed values in a fixed action
    sequence whose values are known in Python (numpy or concrete jax arrays).

    ``env.step`` takes an out-of-range action as a NO-OP, as Foundation does
    (``checked_step`` reports it); in an analysis that would make the episode
    run as if the agent idled and give a zero gradient through that action,
    with no error, so a concrete sequence is checked here. A traced sequence
    (inside your own ``jax.jit``/``vmap``) is not: there the NO-OP rule holds.

    Raises:
        ValueError: naming the group, the index (step first) of the first
            out-of-range entry, its value and the allowed values.
    """
    if not isinstance(actions, dict):
        return  # check_action_sequence names what is wrong
    for g in env.agent_groups:
        a = actions.get(g.name)
        layout = env.group_actions[g.name]
        if a is None or isinstance(a, jax.core.Tracer) or layout.passive:
            continue
        arr = np.asarray(a)
        if not np.issubdtype(arr.dtype, np.integer) or arr.ndim < len(layout.action_shape):
            continue  # check_action_sequence names the dtype or shape
        if layout.multi_action_mode:  # as ActionLayout.in_range, in numpy (no tracing under a jit)
            bad = ~np.all((arr >= 0) & (arr < np.asarray(layout.dims)), axis=-1)
        else:
            bad = ~((arr >= 0) & (arr < layout.n_actions))
        if bad.any():
            idx = tuple(int(i) for i in np.argwhere(bad)[0])
            value = arr[idx].tolist()
            raise ValueError(
                f'actions["{g.name}"] holds {value} at index {list(idx)} (step first), outside its allowed '
                f"actions {env.codec.range_text(layout)}: env.step would take it as a NO-OP (as Foundation "
                "does), so the episode would run as if that agent idled and the gradient through it would be zero"
            )


def check_action_source(actions, policy) -> None:
    """Raise ``ValueError`` unless exactly one of ``actions`` / ``policy`` is given."""
    if (actions is None) == (policy is None):
        raise ValueError("give exactly one of actions= (a fixed sequence) or policy= (a function)")


def check_maker_args(env, policy, n_steps) -> None:
    """Check what a function maker (``make_rollout_fn``, ``metric_fn``, ``make_sweep``)
    is given, so that a bad argument is named when the function is made, not at its first call.

    Raises:
        TypeError: ``env`` is not a jaxecon env (``jaxecon.env_checks.check_economy``).
        ValueError: ``policy`` is neither None nor callable; ``n_steps`` is neither None nor an int >= 1.
    """
    check_economy(env)
    if policy is not None and not callable(policy):
        raise ValueError(f"policy must be None or callable (key, obs, params) -> actions, got {policy!r}")
    if n_steps is not None:
        check_n_steps(n_steps)


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
        completions: int >= 0, episodes completed before this one (drives
            annealing and the energy warm-up; a traced count is used as given).
    Returns:
        ``Rollout``.
    Raises:
        ValueError: both or neither of ``actions``/``policy`` given, bad
            ``n_steps``, a ``completions`` that is not an int >= 0, an
            action sequence of the wrong shape or dtype, or a concrete one
            holding an out-of-range action (``check_action_values``).
    """
    check_action_source(actions, policy)
    n_steps = check_n_steps(env.episode_length if n_steps is None else n_steps)
    if actions is not None:
        checked = check_action_sequence(env, actions, n_steps)
        check_action_values(env, actions)  # the values as given: concrete ones are checked, even under a jit
        actions = checked
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

    Raises:
        as ``check_maker_args``, when ``fn`` is made.
    """
    check_maker_args(env, policy, n_steps)
    if policy is not None:
        def fn(key, params):
            return rollout(env, key, params, policy=policy, n_steps=n_steps)
    else:
        def fn(key, params, actions):
            return rollout(env, key, params, actions=actions, n_steps=n_steps)
    return jax.jit(fn) if jit else fn
