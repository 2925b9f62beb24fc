"""Numeric helpers shared by components and scenarios: exact float semantics.

Foundation computes in numpy (float64 for the gridworld, float32 casts in the
COVID-19 model). Where a one-ulp difference would flip a later comparison,
jaxecon needs numpy's rounding and summation order; these helpers give it,
and the float32 rounding of values Foundation keeps in float32 arrays
(``as_float32``, ``straight_through_trunc``), switched by a static flag.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np


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
    (rounded down to a multiple of 8) and the halves' sums are added. Here
    every block of that split tree is summed at once (one gather, 16
    vectorized steps) and the tree's additions run level by level, so the
    traced program grows with log(n), not n.
    """
    n = x.shape[-1]
    if n < 8:
        out = x[..., 0] if n else jnp.zeros(x.shape[:-1], x.dtype)
        for i in range(1, n):
            out = out + x[..., i]
        return out
    plan = _pairwise_plan(n)
    vals = x[..., plan.block_index[:, 0, :]]  # [..., L, 8]: each block's first 8 values
    for b in range(1, plan.block_index.shape[1]):  # the lanes' running sums, in numpy's order
        idx, ok = plan.block_index[:, b, :], plan.block_valid[:, b, :]
        if ok.any():
            vals = jnp.where(ok, vals + x[..., np.maximum(idx, 0)], vals)
    v = ((vals[..., 0] + vals[..., 1]) + (vals[..., 2] + vals[..., 3])) + (
        (vals[..., 4] + vals[..., 5]) + (vals[..., 6] + vals[..., 7]))  # [..., L]
    for k in range(plan.rest_index.shape[1]):  # each block's last n % 8 values, one by one
        ok = plan.rest_valid[:, k]
        if ok.any():
            v = jnp.where(ok, v + x[..., np.maximum(plan.rest_index[:, k], 0)], v)
    nodes = jnp.concatenate([v, jnp.zeros(v.shape[:-1] + (plan.n_nodes - v.shape[-1],), v.dtype)], -1)
    for parent, left, right in plan.levels:  # the split tree's additions, deepest first
        nodes = nodes.at[..., parent].set(nodes[..., left] + nodes[..., right])
    return nodes[..., plan.root]


class _PairwisePlan:
    """numpy's pairwise-summation tree of an array of length n (static).

    Attributes:
        block_index: int [L, 16, 8]: the array index of lane j's b-th value in
            block k (-1 where the block has none); blocks in tree order.
        block_valid: bool [L, 16, 8].
        rest_index, rest_valid: int/bool [L, 7]: block k's last ``len % 8``
            values (added one by one after the lanes).
        n_nodes: blocks plus internal nodes; ``root``: the whole array's node.
        levels: ``[(parent, left, right) int arrays]``, deepest level first.
    """

    def __init__(self, n: int):
        blocks, internal = [], []  # (start, length); (node, left node, right node, depth)

        def build(start, length, depth):
            if length <= 128:
                blocks.append((start, length))
                return ("b", len(blocks) - 1)
            half = length // 2
            half -= half % 8
            left = build(start, half, depth + 1)
            right = build(start + half, length - half, depth + 1)
            internal.append((left, right, depth))
            return ("i", len(internal) - 1)

        root = build(0, n, 0)
        n_blocks = len(blocks)
        self.block_index = np.full((n_blocks, 16, 8), -1, np.int64)
        self.rest_index = np.full((n_blocks, 7), -1, np.int64)
        for k, (start, length) in enumerate(blocks):
            full = length - length % 8
            for i in range(full):
                self.block_index[k, i // 8, i % 8] = start + i
            for r, i in enumerate(range(full, length)):
                self.rest_index[k, r] = start + i
        self.block_valid = self.block_index >= 0
        self.rest_valid = self.rest_index >= 0

        def node(ref):
            return ref[1] if ref[0] == "b" else n_blocks + ref[1]

        self.n_nodes = n_blocks + len(internal)
        self.root = node(root)
        by_depth = {}
        for i, (left, right, depth) in enumerate(internal):
            by_depth.setdefault(depth, []).append((n_blocks + i, node(left), node(right)))
        self.levels = [tuple(np.asarray(c, np.int64) for c in zip(*by_depth[d]))
                       for d in sorted(by_depth, reverse=True)]


@functools.lru_cache(maxsize=64)
def _pairwise_plan(n: int) -> _PairwisePlan:
    return _PairwisePlan(n)


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
