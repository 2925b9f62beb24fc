"""Gather's vectorised move resolution equals Foundation's one-by-one processing."""

import jax
import jax.numpy as jnp
import numpy as np
from hypothesis import given, settings, strategies as st

from jaxecon.components.gather import MOVES, resolve_moves

resolve = jax.jit(resolve_moves, static_argnums=4)


def sequential(loc, act, order, h, w, blocked):
    """Foundation's move.py loop: agents in ``order``, a move succeeds iff the target is free."""
    loc = [tuple(x) for x in loc]
    moved = [False] * len(loc)
    for i in order:
        if act[i] == 0:
            continue
        r, c = loc[i][0] + MOVES[act[i]][0], loc[i][1] + MOVES[act[i]][1]
        if 0 <= r < h and 0 <= c < w and not blocked[r, c] and (r, c) not in loc:
            loc[i] = (r, c)
            moved[i] = True
    return np.array(moved)


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(2, 30), st.integers(2, 6))
def test_matches_sequential_processing_in_crowds(seed, n, size):
    rng = np.random.default_rng(seed)
    h = w = size
    n = min(n, h * w)
    cells = rng.choice(h * w, size=n, replace=False)
    loc = np.stack([cells // w, cells % w], axis=1)
    act = rng.integers(0, 5, size=n)
    blocked = rng.random((h, w)) < 0.15
    blocked[loc[:, 0], loc[:, 1]] = False
    order = rng.permutation(n)
    expected = sequential(loc, act, order, h, w, blocked)

    target = loc + MOVES[act]
    inb = (target[:, 0] >= 0) & (target[:, 0] < h) & (target[:, 1] >= 0) & (target[:, 1] < w)
    tr, tc = np.clip(target[:, 0], 0, h - 1), np.clip(target[:, 1], 0, w - 1)
    wants = (act > 0) & inb & ~blocked[tr, tc]
    grid = -np.ones((h, w), np.int32)
    grid[loc[:, 0], loc[:, 1]] = np.arange(n)
    rank = np.empty(n, np.int32)
    rank[order] = np.arange(n)
    got = resolve(jnp.asarray(wants), jnp.asarray(tr * w + tc), jnp.asarray(grid[tr, tc]), jnp.asarray(rank), h * w)
    np.testing.assert_array_equal(np.asarray(got), expected)


def test_chain_of_followers_needs_the_order():
    """Agents in a row each step into the tile the next one leaves: only works front to back."""
    wants = jnp.array([True, True, True])
    target = jnp.array([1, 2, 3])  # agent i stands on tile i, moves to i + 1
    occupant = jnp.array([1, 2, -1])
    front_first = jnp.array([2, 1, 0])
    back_first = jnp.array([0, 1, 2])
    np.testing.assert_array_equal(np.asarray(resolve(wants, target, occupant, front_first, 4)), [True, True, True])
    np.testing.assert_array_equal(np.asarray(resolve(wants, target, occupant, back_first, 4)), [False, False, True])
