"""The one scan over steps: random, policy or given actions, per-step recorders.

Every caller that steps an economy many times uses this module: ``jaxecon
run`` (``jaxecon.cli.run``), the throughput benchmark (``jaxecon.bench``),
``jaxecon.sharding``, ``jaxecon.analysis`` and, next, training. A rollout is
one ``jax.lax.scan`` over steps of ``env.step`` (Foundation's
``Economy.step``, in ``jaxecon.core.env``), with the actions of each
step

- uniformly random valid (``env.sample_actions`` on the step's action masks;
  the default),
- from a policy ``policy(key, obs, state) -> actions`` (or, with a carried
  policy state, ``policy(key, obs, state, policy_state) -> (actions,
  policy_state)``; a trainer's policy closes over its network parameters),
- or given as a sequence ``{"a": int [T, n_agents, ...], "p": int [T, ...]}``
  (keyed by the env's groups, ``env.agent_groups``).

An optional recorder ``recorder(state, actions, reward, done, info) ->
pytree`` is called after every step; its outputs are stacked along a leading
time axis. With ``batched=True`` every array of the carry has a leading axis
of B economies: the per-economy step (keys, actions, ``env.step``) is
``jax.vmap``-ed and the recorder sees the whole batch (so it can keep one
economy's slices, or reduce over the batch, without storing all of them).

Keys. Each step consumes key material in one of two schedules, fixed by the
caller and exact (the same key gives the same trajectory, batched or not):

- a carried key (``RolloutCarry.key``): per step ``key, k_act, k_step =
  jax.random.split(key, 3)`` (``key, k_step = split(key)`` when the actions
  are given);
- per-step keys ``step_keys`` (``[T]``, or ``[T, B]`` batched): step t uses
  ``k_act, k_step = jax.random.split(step_keys[t])`` (``k_step =
  step_keys[t]`` when the actions are given).

``episode`` resets from one key and runs the per-step-key schedule.

Usage::

    from jaxecon.rollout import RolloutCarry, episode, scan_steps
    state0, carry, rewards = episode(env, key, params, 100,
                                     recorder=lambda s, a, r, d, i: r)
    # a batch of 64 economies, carried keys, 10 steps per call (jit it once):
    run = jax.jit(lambda c, p: scan_steps(env, p, c, 10, batched=True))
    carry, _ = run(RolloutCarry(obs, state, keys), params)

Nothing here runs Python loops over agents or economies; every function is
pure, so a jitted caller traces it once.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import jax
import jax.numpy as jnp
import numpy as np
from flax import struct

from jaxecon.core.arg_checks import check_completions, check_key
from jaxecon.core.state import EnvParams, EnvState
from jaxecon.env_checks import check_economy

__all__ = [
    "Policy",
    "Recorder",
    "RolloutCarry",
    "check_action_sequence",
    "check_n_steps",
    "episode",
    "random_policy",
    "scan_steps",
]

#: ``policy(key, obs, state) -> {"a": int32 [n_agents(, subspaces)], "p": int32 [...]}``
#: for one economy (vmapped over a batch); with a carried policy state
#: ``policy(key, obs, state, policy_state) -> (actions, policy_state)``.
Policy = Callable[..., Any]

#: ``recorder(state, actions, reward, done, info) -> pytree`` after each step
#: (batched: the whole batch); its outputs are stacked over steps.
Recorder = Callable[[EnvState, dict, dict, jax.Array, dict], Any]


@struct.dataclass
class RolloutCarry:
    """What the scan carries from one step to the next (batched: leading axis B).

    Attributes:
        obs: observations ``{"a": {...}, "p": {...}}`` of the current step
            (the actions are chosen from them).
        state: ``EnvState``.
        key: PRNG key split once per step (the carried-key schedule); None
            when the caller gives ``step_keys``.
        policy_state: the policy's own carried state (any pytree, e.g. a
            recurrent network's hidden state); None for a policy without one.
    """

    obs: dict
    state: EnvState
    key: Optional[jax.Array] = None
    policy_state: Any = None


def _masks_after(obs: dict, actions) -> dict:
    """``obs`` (``{group: {name: array}}``, ``env.step``'s) with every ``action_mask`` multiplied by a 1.0 computed from
    ``actions``: the same values, bit for bit, written only once the policy
    has drawn its actions.

    Why: the scan carries the masks the policy reads. A mask that does not
    depend on the state (the one-step economy's all-ones labor choices,
    10,000 x 101 floats) may otherwise be computed before the policy has read
    the previous one, and XLA then copies the carried mask twice every step
    to keep both. ``float(a) * 0 + 1`` is exactly 1 for every integer ``a``
    (XLA does not fold a float times zero), and ``x * 1.0`` is ``x`` for
    every float. benchmarks/RESULTS.md has the measurement.
    """
    one = sum(jnp.ravel(a)[0].astype(jnp.float32) for a in jax.tree.leaves(actions)) * jnp.float32(0) + 1
    tie = lambda x: x * one.astype(x.dtype) if jnp.issubdtype(x.dtype, jnp.floating) else x  # noqa: E731
    return {g: {k: jax.tree.map(tie, v) if k == "action_mask" else v for k, v in o.items()}
            for g, o in obs.items()}


def random_policy(env) -> Policy:
    """``policy(key, obs, state)``: uniformly random valid actions (``env.sample_actions``)."""

    def policy(key, obs, state):
        return env.sample_actions(key, obs)

    return policy


def check_n_steps(n_steps) -> int:
    """``n_steps`` as an int, or ``ValueError`` unless it is an int >= 1 (not a bool)."""
    if not isinstance(n_steps, (int, np.integer)) or isinstance(n_steps, bool) or n_steps < 1:
        raise ValueError(f"n_steps must be an int >= 1, got {n_steps!r}")
    return int(n_steps)


def check_action_sequence(env, actions, n_steps: int, batch: Optional[int] = None) -> dict:
    """A given action sequence, checked and completed: ``{group: int32}`` for
    every group of ``env.agent_groups`` (Foundation's: ``"a"``, ``"p"``).

    Shapes: a mobile group's ``[T(, B), count] + its action shape``, the
    planner's ``[T(, B)] + planner action shape`` (the action shape is ``()``
    in single-action mode, ``(n_subspaces,)`` in multi-action mode); a
    missing entry is NO-OP (zeros) throughout.

    Raises:
        ValueError: not a dict keyed by the env's groups; a wrong shape;
            a non-integer dtype.
    """
    names = tuple(g.name for g in env.agent_groups)
    if not isinstance(actions, dict) or not set(actions) <= set(names):
        raise ValueError(
            f"actions must be a dict keyed by the env's groups {names}, each int [T, ...] with a "
            f"leading time axis, got {type(actions).__name__} with keys "
            f"{sorted(actions) if isinstance(actions, dict) else None}"
        )
    lead_t = (n_steps,) if batch is None else (n_steps, batch)
    out = {}
    for g in env.agent_groups:
        k, layout = g.name, env.group_actions[g.name]
        shape = lead_t + (() if g.is_planner else (g.count,)) + layout.action_shape
        if actions.get(k) is None:
            out[k] = jnp.zeros(shape, jnp.int32)
            continue
        arr = jnp.asarray(actions[k])
        if arr.shape != shape:
            raise ValueError(
                f'actions["{k}"] must have shape {shape} (n_steps={n_steps} first), got {arr.shape}'
            )
        if not jnp.issubdtype(arr.dtype, jnp.integer):
            raise ValueError(f'actions["{k}"] must be integer, got {arr.dtype}')
        out[k] = arr.astype(jnp.int32)
    return out


def scan_steps(
    env,
    params: EnvParams,
    carry: RolloutCarry,
    n_steps: int,
    *,
    step_keys: Optional[jax.Array] = None,
    policy: Optional[Policy] = None,
    actions: Optional[dict] = None,
    recorder: Optional[Recorder] = None,
    batched: bool = False,
):
    """``n_steps`` steps of ``env`` from ``carry`` as one ``lax.scan``.

    Args:
        env: an environment from ``jaxecon.make``, or a ``jaxecon.wrappers.Wrapper``
            over one (same signatures: an observation adapter, ``LogWrapper``, ...).
        params: ``EnvParams``, shared by the whole batch (may be traced:
            differentiate or vmap over it).
        carry: ``RolloutCarry`` to start from (e.g. right after
            ``env.reset``); with ``batched`` every leaf has a leading axis B.
        n_steps: number of steps T (a static int >= 1).
        step_keys: per-step PRNG keys ``[T]`` (``[T, B]`` batched); without
            them ``carry.key`` is split every step (see the module docstring).
        policy: ``policy(key, obs, state) -> actions`` for one economy, or,
            when ``carry.policy_state`` is not None, ``policy(key, obs, state,
            policy_state) -> (actions, policy_state)``. Default (and without
            ``actions``): ``random_policy(env)``. Its integer actions carry no
            gradient.
        actions: a given action sequence instead of a policy (see
            ``check_action_sequence``; ``[T, B, ...]`` batched).
        recorder: ``recorder(state, actions, reward, done, info) -> pytree``,
            called after each step with ``env.step``'s outputs (batched: of
            the whole batch).
        batched: the carry (and ``step_keys``, ``actions``) hold a batch of
            economies along a leading axis B.
    Returns:
        ``(carry, records)``: the ``RolloutCarry`` after the last step and the
        recorder's outputs stacked along a leading axis T (None without a
        recorder).
    Raises:
        TypeError: ``env`` is not a jaxecon env (``jaxecon.make``'s; a shim
            env or a front is named, with what to pass instead); ``carry`` is
            not a ``RolloutCarry``.
        ValueError: a bad ``n_steps``; both ``policy`` and ``actions``; a
            policy or recorder that is not callable; neither ``carry.key`` nor
            ``step_keys``; ``step_keys`` or ``actions`` of the wrong shape.
    """
    check_economy(env, wrappers=True)
    if not isinstance(carry, RolloutCarry):
        raise TypeError(f"carry must be a RolloutCarry (RolloutCarry(obs=obs, state=state, key=key) from "
                        f"env.reset's outputs), got {type(carry).__qualname__}")
    n_steps = check_n_steps(n_steps)
    if policy is not None and actions is not None:
        raise ValueError("give at most one of policy= and actions=")
    if policy is not None and not callable(policy):
        raise ValueError(f"policy must be callable, got {policy!r}")
    if recorder is not None and not callable(recorder):
        raise ValueError(f"recorder must be None or callable (state, actions, reward, done, info) -> pytree, "
                         f"got {recorder!r}")
    batch = int(carry.state.timestep.shape[0]) if batched else None
    lead = (n_steps,) if batch is None else (n_steps, batch)
    if step_keys is None:
        if carry.key is None:
            raise ValueError("give carry.key (split every step) or step_keys (one per step)")
    elif tuple(step_keys.shape[: len(lead)]) != lead:
        raise ValueError(f"step_keys must have leading shape {lead}, got {tuple(step_keys.shape)}")
    draw = actions is None
    if draw:
        policy = random_policy(env) if policy is None else policy
    else:
        actions = check_action_sequence(env, actions, n_steps, batch)
    stateful = carry.policy_state is not None

    def one_step(key, obs, state, policy_state, act):
        """One economy's step; ``key`` is the carried key or this step's key."""
        if step_keys is None:
            if draw:
                key, k_act, k_step = jax.random.split(key, 3)
            else:
                key, k_step = jax.random.split(key)
        elif draw:
            k_act, k_step = jax.random.split(key)
        else:
            k_step = key
        if draw:
            if stateful:
                act, policy_state = policy(k_act, obs, state, policy_state)
            else:
                act = policy(k_act, obs, state)
        obs, state, reward, done, info = env.step(k_step, state, act, params)
        if draw:
            obs = _masks_after(obs, act)
        return key, obs, state, policy_state, act, reward, done, info

    step = jax.vmap(one_step) if batched else one_step

    def body(c: RolloutCarry, xs):
        k_t, act_t = xs
        key, obs, state, policy_state, act, reward, done, info = step(
            c.key if step_keys is None else k_t, c.obs, c.state, c.policy_state, act_t
        )
        if step_keys is not None:
            key = c.key
        record = None if recorder is None else recorder(state, act, reward, done, info)
        return RolloutCarry(obs=obs, state=state, key=key, policy_state=policy_state), record

    return jax.lax.scan(body, carry, (step_keys, actions), length=n_steps)


def episode(
    env,
    key: jax.Array,
    params: EnvParams,
    n_steps: Optional[int] = None,
    *,
    policy: Optional[Policy] = None,
    actions: Optional[dict] = None,
    policy_state: Any = None,
    recorder: Optional[Recorder] = None,
    completions=0,
):
    """Reset one economy from ``key`` and run ``n_steps`` steps (``scan_steps``).

    ``k_reset, k_steps = jax.random.split(key)``; the reset is
    ``env.reset(k_reset, params, completions=completions)`` and the steps use
    the per-step keys ``jax.random.split(k_steps, n_steps)``. Batch it with
    ``jax.vmap`` over ``key``.

    Args:
        n_steps: number of steps (default ``env.episode_length``).
        policy_state: the policy's initial carried state (None: a policy
            without one).
        completions: int [] in 0..2**31 - 1, episodes completed before this one
            (Foundation's ``_completions``; drives annealing and the energy
            warm-up); a traced count is used as given
            (``jaxecon.core.arg_checks.check_completions``).
        Others as ``scan_steps``.
    Returns:
        ``(initial_state, carry, records)``: the ``EnvState`` right after the
        reset, the ``RolloutCarry`` after the last step (``key`` None) and the
        stacked recorder outputs.
    Raises:
        TypeError: ``key`` is not one PRNG key; otherwise as ``scan_steps``.
        ValueError: ``completions`` is not an int in 0..2**31 - 1 (a negative,
            too large, float or non-scalar count); otherwise as ``scan_steps``.
    """
    check_economy(env)
    check_key(key, "key")
    check_completions(completions)
    n_steps = check_n_steps(env.episode_length if n_steps is None else n_steps)
    k_reset, k_steps = jax.random.split(key)
    obs, state0 = env.reset(k_reset, params, completions=completions)
    carry = RolloutCarry(obs=obs, state=state0, policy_state=policy_state)
    carry, records = scan_steps(
        env, params, carry, n_steps, step_keys=jax.random.split(k_steps, n_steps),
        policy=policy, actions=actions, recorder=recorder,
    )
    return state0, carry, records
