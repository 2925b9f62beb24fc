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

    numpy sums a block of at most 128 values with eight running partial sums
    (lanes ``i % 8``, in order), adds the lanes pairwise and then the last
    ``n % 8`` values one by one; a longer array is split at half its length
    (rounded down to a multiple of 8) and the halves' sums are added. One
    block is summed with static slices; the blocks of a longer array by one
    ``lax.scan`` over them (so the traced program does not grow with n but
    for one addition per block), then added in the split tree's order.
    """
    n = x.shape[-1]
    if n < 8:
        out = x[..., 0] if n else jnp.zeros(x.shape[:-1], x.dtype)
        for i in range(1, n):
            out = out + x[..., i]
        return out
    if n <= 128:
        return _block_sum(x, n)
    blocks = []

    def split(start, length):
        if length <= 128:
            blocks.append((start, length))
            return len(blocks) - 1
        half = length // 2
        half -= half % 8
        return (split(start, half), split(start + half, length - half))

    tree = split(0, n)
    starts, lengths = (jnp.asarray(c, jnp.int32) for c in zip(*blocks))
    padded = jnp.concatenate([x, jnp.zeros(x.shape[:-1] + (_BLOCK,), x.dtype)], axis=-1)

    def one(_, block):
        start, length = block
        return None, _block_sum(jax.lax.dynamic_slice_in_dim(padded, start, _BLOCK, axis=-1), length)

    _, sums = jax.lax.scan(one, None, (starts, lengths))  # [n_blocks, ...]

    def add(node):
        return sums[node] if isinstance(node, int) else add(node[0]) + add(node[1])

    return add(tree)


#: Values read per block: 128 and the 8 a remainder may reach past them.
_BLOCK = 136


def _block_sum(seg, length):
    """numpy's sum of the first ``length`` (8..128; a Python int or a traced
    int32) values of ``seg`` [..., >= 136 when traced]: eight lanes summed in
    order, added pairwise, then the last ``length % 8`` values one by one."""
    static = isinstance(length, int)
    full = length - length % 8
    lanes = seg[..., 0:8]
    for b in range(1, 16):
        if static and 8 * b >= full:
            break
        step = lanes + seg[..., 8 * b:8 * b + 8]
        lanes = step if static else jnp.where(8 * b < full, step, lanes)
    v = ((lanes[..., 0] + lanes[..., 1]) + (lanes[..., 2] + lanes[..., 3])) + (
        (lanes[..., 4] + lanes[..., 5]) + (lanes[..., 6] + lanes[..., 7]))
    if static:
        for i in range(full, length):
            v = v + seg[..., i]
        return v
    rest = jax.lax.dynamic_slice_in_dim(seg, full, 8, axis=-1)
    for r in range(7):
        v = jnp.where(r < length - full, v + rest[..., r], v)
    return v


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
