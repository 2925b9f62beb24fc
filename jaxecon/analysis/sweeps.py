"""Vectorised policy sweeps: one metric for a batch of parameter settings.

``jax.vmap`` over a leading batch axis of the part of ``EnvParams`` named by
``wrt`` (see ``jaxecon.analysis.params``): N tax schedules, N payments, N
utility curvatures, ... evaluated in one compiled program, optionally with
their gradients.

Usage::

    from jaxecon.analysis import make_sweep
    sweep = make_sweep(env, "planner_objective",
                       wrt="components.PeriodicBracketTax.fixed_rates")
    values = sweep(key, params, schedules, actions)   # schedules: float [N, B] -> float [N]
"""

from __future__ import annotations

from typing import Optional

import jax

from jaxecon.analysis import params as P
from jaxecon.analysis.gradients import metric_fn
from jaxecon.analysis.rollout import Policy, check_action_source
from jaxecon.core.param_checks import check_bounds, leaf_bounds


def _check_values(params, wrt, values) -> None:
    """``values`` must be ``select(params, wrt)`` with one leading axis N on every leaf
    (``ValueError`` naming the shapes)."""
    node = P.select(params, wrt)
    ok = jax.tree.structure(node) == jax.tree.structure(values)
    if ok:
        pairs = list(zip(P.leaf_shapes(node), P.leaf_shapes(values)))
        ok = all(len(g) == len(w) + 1 and g[1:] == w for w, g in pairs) and len({g[0] for _, g in pairs}) == 1
    if not ok:
        raise ValueError(
            f"sweep values for {wrt!r} must have the parameter's shape(s) {P.shapes(node)} with one "
            f"leading batch axis N (the same N everywhere), got shapes {P.shapes(values)}"
        )


def _check_bounds(params, wrt, values) -> None:
    """Every concrete entry of ``values`` finite and within its parameter's bound
    (``jaxecon.core.bounds``, the table ``jaxecon.make`` checks), else ``ValueError``
    naming the path, the values and the allowed values."""
    bounds = leaf_bounds(params)
    if wrt is None or isinstance(wrt, str):
        check_bounds(values, wrt or "", bounds)
    else:
        for path in P.check_wrt(wrt):
            check_bounds(values[path], path, bounds)


def make_sweep(
    env,
    metric: str,
    *,
    wrt: P.WrtSpec,
    policy: Optional[Policy] = None,
    n_steps: Optional[int] = None,
    with_grad: bool = False,
    batch_keys: bool = False,
    jit: bool = True,
):
    """A ``fn(key, params, values, actions=None)`` evaluating the metric for
    every entry of ``values``: it checks ``values`` on the host, then runs the
    jitted sweep (unless ``jit=False``).

    Args:
        env, metric, policy, n_steps: as ``gradients.metric_fn``.
        wrt: the part of ``EnvParams`` that varies (dotted path, or a sequence
            of paths, or None for whole batched ``EnvParams``).
        with_grad: also return the gradient w.r.t. ``wrt`` of every entry.
        batch_keys: ``key`` is a batch of N keys (one episode's randomness per
            setting) instead of one key shared by all settings.
    Returns:
        ``fn``; ``values`` has the structure of ``select(params, wrt)`` with a
        leading axis N on every leaf (else ``ValueError`` at the call), each
        entry finite and within its parameter's bound, as ``jaxecon.make`` and
        ``set_param`` require (else ``ValueError`` naming the path and the
        allowed values; ``jaxecon.core.bounds``; traced values are not
        inspected). ``fn`` returns float [N] (and with ``with_grad`` a pair
        ``(float [N], grads with leading axis N)``).
    """
    if isinstance(wrt, (list, tuple)) and not wrt:
        raise KeyError("wrt must name at least one parameter")
    f = metric_fn(env, metric, wrt=wrt, policy=policy, n_steps=n_steps)
    g = jax.value_and_grad(f) if with_grad else f
    in_axes = (0, 0 if batch_keys else None, None, None)
    vg = jax.vmap(g, in_axes=in_axes)

    def fn(key, params, values, actions=None):
        return vg(P.as_float_tree(values), key, params, actions)

    compiled = jax.jit(fn) if jit else fn

    def checked(key, params, values, actions=None):
        _check_values(params, wrt, values)
        _check_bounds(params, wrt, values)  # concrete values only: traced ones are not inspected
        return compiled(key, params, values, actions)

    return checked


def sweep(env, metric, key, params, values, *, wrt, actions=None, policy=None, n_steps=None,
          with_grad=False, batch_keys=False):
    """One-off ``make_sweep(...)(key, params, values, actions)`` (compiles on every call).

    Raises:
        ValueError: both or neither of ``actions``/``policy``, unknown metric.
        KeyError: bad ``wrt`` path.
    """
    check_action_source(actions, policy)
    fn = make_sweep(env, metric, wrt=wrt, policy=policy, n_steps=n_steps, with_grad=with_grad,
                    batch_keys=batch_keys)
    return fn(key, params, values, actions)
