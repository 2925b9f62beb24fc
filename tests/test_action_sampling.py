"""``jaxecon.core.action_layout._uniform_valid_index`` (what ``env.sample_actions`` draws
with) against its definition in NumPy: with u the uniform of the row, the
floor(u * n_valid)-th valid entry (0 for a row with none). Both ways of finding
it (one running count over the K entries for small masks, a running count over
blocks of about sqrt(K) entries then inside the block for large ones) must give
exactly that index, and so must the shortcut taken when every row is all
valid (the index is then r itself)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from jaxecon.core import action_layout
from jaxecon.core.action_layout import _uniform_valid_index


# (K, whether every mask is forced onto the blocked path, which K > 64 takes
# anyway, whether every row is all valid)
CASES = ([(k, blocked, False) for k in (1, 5, 50, 64) for blocked in (False, True)]
         + [(101, False, False), (300, False, False), (5, False, True), (101, False, True)])


@pytest.mark.parametrize("k, blocked, full", CASES)
def test_uniform_valid_index_matches_definition(k, blocked, full, monkeypatch):
    if blocked:
        monkeypatch.setattr(action_layout, "_ONE_COUNT_MAX_K", 0)
    rng = np.random.default_rng(k)
    mask = (rng.random((64, 3, k)) < rng.random((64, 3, 1))).astype(np.float32)
    mask[0, 0] = 0.0  # no valid entry
    mask[1, 1] = 1.0  # all valid
    if full:
        mask[:] = 1.0
    key = jax.random.key(k)
    got = np.asarray(jax.jit(_uniform_valid_index)(key, jnp.asarray(mask)))
    valid = mask > 0
    count = valid.sum(-1)
    u = np.asarray(jax.random.uniform(key, count.shape))
    r = np.minimum(np.floor(u * count.astype(np.float32)).astype(np.int32), np.maximum(count - 1, 0))
    want = np.zeros(count.shape, np.int32)
    for idx in np.ndindex(count.shape):
        where = np.flatnonzero(valid[idx])
        want[idx] = where[r[idx]] if len(where) else 0
    np.testing.assert_array_equal(got, want)
    assert got.dtype == np.int32
