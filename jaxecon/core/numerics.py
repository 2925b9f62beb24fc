"""Numeric helpers shared by components and scenarios: exact float semantics.

Foundation computes in numpy (float64 for the gridworld, float32 casts in the
COVID-19 model). Where a one-ulp difference would flip a later comparison,
jaxecon needs numpy's rounding and summation order; these helpers give it,
and the float32 rounding of values Foundation keeps in float32 arrays
(``as_float32``, ``straight_through_trunc``), switched by a static flag.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp


def unfused(x):
    """``x`` unchanged, but kept out of fused multiply-adds.

    XLA on CPU contracts ``a * b + c`` into one FMA instruction, which rounds
    once instead of twice and so differs from numpy (Foundation) in the last
    bit. Routing a product through this identity ``select`` keeps it rounded
    on its own; use it where a one-ulp difference can flip a later comparison.
    """
    return jnp.where(jnp.isnan(x), jnp.nan, x)


def numpy_order_sum(x):
    """Sum over the last axis in numpy's order (``np.sum``'s pairwise summation).

    Gives bit-identical float64 results to Foundation's ``np.sum`` where a
    rounding difference could flip a later comparison (bracket of an income,
    richest agent); XLA's own reduction order differs in the last bit.
    """
    n = x.shape[-1]
    if n < 8:
        out = x[..., 0] if n else jnp.zeros(x.shape[:-1], x.dtype)
        for i in range(1, n):
            out = out + x[..., i]
        return out
    if n <= 128:
        r = [x[..., j] for j in range(8)]
        i = 8
        while i < n - n % 8:
            r = [r[j] + x[..., i + j] for j in range(8)]
            i += 8
        out = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for k in range(i, n):
            out = out + x[..., k]
        return out
    n2 = n // 2
    n2 -= n2 % 8
    return numpy_order_sum(x[..., :n2]) + numpy_order_sum(x[..., n2:])


def as_float32(x, enabled: bool):
    """``x`` rounded to float32 precision, keeping its dtype (identity for float32).

    Marks where Foundation stores or computes a value in float32 (the COVID-19
    model's world arrays); differentiable (the rounding passes gradients
    through unchanged). ``enabled`` (a static bool, e.g. the scenario's
    ``float32_rounding``): False makes it the identity. Returns a jax array.
    """
    x = jnp.asarray(x)
    if x.dtype == jnp.float32 or not enabled:
        return x
    return x.astype(jnp.float32).astype(x.dtype)


def straight_through_trunc(x, enabled: bool):
    """``trunc(x)`` in the forward pass (Foundation's ``astype(int32)``), identity gradient.

    ``enabled`` (a static bool): False makes it the identity in the forward
    pass too (the smooth model of ``float32_rounding=False``).
    """
    if not enabled:
        return x
    return x + jax.lax.stop_gradient(jnp.trunc(x) - x)
