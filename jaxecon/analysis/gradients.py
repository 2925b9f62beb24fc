"""Gradients of episode metrics with respect to any part of ``EnvParams``.

``jax.grad`` runs through the whole episode: reset, a ``lax.scan`` over
steps (every component and the scenario) and the metric (see
``jaxecon.analysis.metrics``). Which gradients are exact and which are zero
because the dynamics are discrete is listed in docs/differentiability.md.

Usage::

    from jaxecon.analysis import make_metric_grad
    f = make_metric_grad(env, "planner_objective",
                         wrt="components.PeriodicBracketTax.fixed_rates")
    value, grad = f(key, params, actions)      # jitted; grad: float [B]
"""

from __future__ import annotations

import functools
from typing import Optional

import jax

from jaxecon.analysis import params as P
from jaxecon.analysis.metrics import check_metric_name, metric_value
from jaxecon.analysis.rollout import Policy, check_action_source, check_action_values, check_maker_args, rollout
from jaxecon.core.state import EnvParams


def metric_fn(
    env,
    metric: str,
    *,
    wrt: P.WrtSpec = None,
    policy: Optional[Policy] = None,
    n_steps: Optional[int] = None,
):
    """``f(value, key, params, actions=None) -> float []``: the metric of one episode
    as a function of the part of ``params`` named by ``wrt``.

    Args:
        env: an environment from ``jaxecon.make``.
        metric: a name accepted by ``jaxecon.analysis.metric_value``.
        wrt: None (all of EnvParams), a dotted path (e.g.
            ``"components.PeriodicBracketTax.fixed_rates"``) or a sequence of
            paths (then ``value`` is ``{path: node}``); see ``analysis.params``.
            A leaf the economy never reads is a ``ValueError`` (``check_wrt_read``).
        policy: ``policy(key, obs, params) -> actions``; without it, ``f``
            takes a fixed action sequence ``actions`` (see ``rollout``).
        n_steps: episode steps (default ``env.episode_length``).
    Returns:
        ``f``, pure and jittable; ``value`` replaces that part of ``params``.
    Raises:
        TypeError: ``env`` is not a jaxecon env.
        KeyError: a ``wrt`` path that names no parameter of ``env``.
        ValueError: an unknown ``metric``, a ``wrt`` leaf the economy never
            reads, ``n_steps`` that is not None or an int >= 1, a ``policy``
            that is not callable.
    """
    check_maker_args(env, policy, n_steps)
    check_metric_name(env, metric)
    P.check_wrt_read(env, wrt)

    def f(value, key, params: EnvParams, actions=None):
        full = P.insert(params, wrt, value)
        if policy is None:
            if actions is None:
                raise ValueError("without policy=, pass the fixed action sequence actions=")
            r = rollout(env, key, full, actions=actions, n_steps=n_steps)
        else:
            r = rollout(env, key, full, policy=policy, n_steps=n_steps)
        return metric_value(env, metric, r, full)

    return f


def make_metric_grad(
    env,
    metric: str,
    *,
    wrt: P.WrtSpec = None,
    policy: Optional[Policy] = None,
    n_steps: Optional[int] = None,
    jit: bool = True,
):
    """A (jitted) ``fn(key, params, actions=None) -> (value, grad)``.

    ``value`` is the metric (float []), ``grad`` has the structure of
    ``select(params, wrt)`` with float leaves (float32, float64 under
    ``jax_enable_x64``). Build it once and call it many times (one compile).
    Raises ``ValueError`` for an unknown metric (listing the allowed names)
    and, at the first call, ``KeyError`` for a bad ``wrt`` path. Without
    ``policy``, each call checks a concrete ``actions`` sequence for
    out-of-range actions first (``rollout.check_action_values``: a
    ``ValueError`` naming the group, index and allowed values), since those
    would be NO-OPs with a zero gradient; a traced one (``fn`` inside your
    own ``jit``/``vmap``) is taken as the step takes it.
    """
    f = metric_fn(env, metric, wrt=wrt, policy=policy, n_steps=n_steps)
    vg = jax.value_and_grad(f)

    def fn(key, params, actions=None):
        value = P.as_float_tree(P.select(params, wrt))
        return vg(value, key, params, actions)

    compiled = jax.jit(fn) if jit else fn
    if policy is not None:
        return compiled

    @functools.wraps(fn)
    def checked(key, params, actions=None):
        if actions is not None:
            check_action_values(env, actions)
        return compiled(key, params, actions)

    return checked


def grad_metric(
    env,
    metric: str,
    key: jax.Array,
    params: EnvParams,
    *,
    wrt: P.WrtSpec = None,
    actions: Optional[dict] = None,
    policy: Optional[Policy] = None,
    n_steps: Optional[int] = None,
):
    """d metric / d (the part of ``params`` named by ``wrt``), for one episode.

    One-off convenience over ``make_metric_grad`` (compiles on every call;
    build ``make_metric_grad`` once for repeated use).

    Args:
        key: PRNG key of the episode (the same key = the same random draws).
        actions / policy: exactly one (see ``rollout``).
        Others as ``metric_fn``.
    Returns:
        The gradient, structured like ``select(params, wrt)``.
    """
    check_action_source(actions, policy)
    fn = make_metric_grad(env, metric, wrt=wrt, policy=policy, n_steps=n_steps)
    return fn(key, params, actions)[1]


def value_and_grad_metric(env, metric, key, params, *, wrt=None, actions=None, policy=None, n_steps=None):
    """``(value, grad)``; as ``grad_metric``."""
    check_action_source(actions, policy)
    fn = make_metric_grad(env, metric, wrt=wrt, policy=policy, n_steps=n_steps)
    return fn(key, params, actions)
