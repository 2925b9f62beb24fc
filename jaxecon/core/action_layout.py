"""Action subspaces, action decoding and mask flattening.

Follows ``ai_economist/foundation/base/base_agent.py`` (``register_components``,
``parse_actions``, ``flatten_masks``): each component contributes zero, one or
several action subspaces per agent kind, in component-list order. In
single-action mode an agent picks one global index (0 = NO-OP, then every
subspace's actions 1..n consecutively); in multi-action mode it picks one
index per subspace (0 = that subspace's NO-OP).

Out-of-range rule inside jit: an action index outside ``[0, n_actions)``
(single-action mode) or outside ``[0, n_k]`` for subspace k (multi-action
mode) is treated as NO-OP. Foundation raises ``ValueError`` in the component
instead (quirk Q1); ``Env.checked_step`` reports such actions with
``jax.experimental.checkify``.
"""

from __future__ import annotations

from dataclasses import dataclass

import jax
import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class ActionLayout:
    """The action subspaces of one agent kind (mobile agents or the planner).

    Attributes:
        names: subspace names in order, e.g. ``("Build", "Gather")`` or
            ``("PeriodicBracketTax.TaxIndexBracket_000", ...)``.
        sizes: number of actions of each subspace, excluding NO-OP.
        multi_action_mode: whether the agent picks one action per subspace.
    """

    names: tuple
    sizes: tuple
    multi_action_mode: bool

    @property
    def passive(self) -> bool:
        """True if the agent has no action subspace at all."""
        return len(self.names) == 0

    @property
    def n_actions(self) -> int:
        """Single-action mode: 1 + sum of sizes (Foundation's ``action_spaces``)."""
        return 1 + int(sum(self.sizes))

    @property
    def dims(self) -> np.ndarray:
        """Multi-action mode: int32 [n_subspaces] of sizes + 1 (own NO-OP each).

        A passive multi-action agent has one placeholder subspace of size 1
        (``PassiveAgentPlaceholder``), as in Foundation.
        """
        if self.passive:
            return np.ones(1, dtype=np.int32)
        return np.asarray(self.sizes, dtype=np.int32) + 1

    @property
    def mask_size(self) -> int:
        """Length of the flattened action mask."""
        if self.multi_action_mode:
            return int(self.dims.sum())
        return self.n_actions

    @property
    def action_shape(self) -> tuple:
        """Trailing action shape per agent: () single-action, (n_subspaces,) multi-action."""
        return (len(self.dims),) if self.multi_action_mode else ()

    def single_action_map(self) -> dict:
        """Global index -> (subspace name, local action), as Foundation's ``single_action_map``."""
        out, g = {}, 1
        for name, n in zip(self.names, self.sizes):
            for k in range(1, n + 1):
                out[g] = (name, k)
                g += 1
        return out

    def _tables(self):
        sub = np.full(self.n_actions, -1, dtype=np.int32)
        local = np.zeros(self.n_actions, dtype=np.int32)
        for g, (name, k) in self.single_action_map().items():
            sub[g] = self.names.index(name)
            local[g] = k
        return sub, local

    def in_range(self, actions: jax.Array) -> jax.Array:
        """bool, same leading shape as ``actions`` minus the subspace axis: action is in range."""
        if self.multi_action_mode:
            dims = jnp.asarray(self.dims)
            return jnp.all((actions >= 0) & (actions < dims), axis=-1)
        return (actions >= 0) & (actions < self.n_actions)

    def decode(self, actions: jax.Array) -> dict:
        """Local action per subspace: ``{name: int32 [...]}`` (0 = NO-OP).

        Args:
            actions: int [...] (single-action) or int [..., n_subspaces] (multi-action).
        """
        if self.passive:
            return {}
        if self.multi_action_mode:
            dims = jnp.asarray(self.dims)
            ok = (actions >= 0) & (actions < dims)
            actions = jnp.where(ok, actions, 0).astype(jnp.int32)
            return {name: actions[..., i] for i, name in enumerate(self.names)}
        sub, local = self._tables()
        ok = (actions >= 0) & (actions < self.n_actions)
        g = jnp.where(ok, actions, 0)
        s = jnp.asarray(sub)[g]
        loc = jnp.asarray(local)[g]
        return {name: jnp.where(s == i, loc, 0) for i, name in enumerate(self.names)}

    def flatten_masks(self, masks: dict, batch_shape: tuple) -> jax.Array:
        """float32 [*batch_shape, mask_size]: Foundation's flattened action mask.

        Args:
            masks: ``{subspace name: bool/float [*batch_shape, size]}``; must hold
                every subspace (``KeyError`` otherwise).
        """
        one = jnp.ones(batch_shape + (1,), dtype=jnp.float32)
        if self.passive:
            return one
        parts = [] if self.multi_action_mode else [one]
        for name in self.names:
            if self.multi_action_mode:
                parts.append(one)
            parts.append(masks[name].astype(jnp.float32))
        return jnp.concatenate(parts, axis=-1)

    def sample(self, key: jax.Array, flat_mask: jax.Array) -> jax.Array:
        """A uniformly random valid action from a flattened mask.

        Single-action mode: uniform over the valid global indices (NO-OP included).
        Multi-action mode: independently per subspace, uniform over its valid
        indices (its NO-OP included).

        Args:
            key: PRNG key.
            flat_mask: float [*batch, mask_size].
        Returns:
            int32 [*batch] or int32 [*batch, n_subspaces].
        """
        if not self.multi_action_mode:
            return _uniform_valid_index(key, flat_mask)
        out, start = [], 0
        keys = jax.random.split(key, len(self.dims))
        for i, d in enumerate(self.dims):
            out.append(_uniform_valid_index(keys[i], flat_mask[..., start:start + d]))
            start += int(d)
        return jnp.stack(out, axis=-1)


#: Masks of more than this many entries K: ``_rth_valid`` counts valid entries in
#: blocks of about sqrt(K) instead of one K x K triangular product per row
#: (chosen by K alone, so the traced program does not depend on the number of
#: agents). The one-step economy's 101 labor actions at 10,000 agents: 10^8
#: multiply-adds per step that way, the bulk of a random-action rollout
#: (measured: benchmarks/RESULTS.md, "Measurements behind the code's choices").
_ONE_COUNT_MAX_K = 64


def _uniform_valid_index(key, mask):
    """int32 [...]: a uniformly random index among the entries of ``mask`` [..., K] > 0.

    One uniform per row: pick the r-th valid entry, r = floor(u * n_valid)
    (cheaper than a Gumbel/categorical draw over K entries). Rows with no
    valid entry give 0. When every row is all valid (the one-step economy's
    labor choices) the r-th valid entry is r and the search is skipped (a
    ``lax.cond``; the same index). The counts are float32 sums of 0/1 (exact
    below 2^24), which XLA:CPU vectorizes, unlike a sum of booleans into
    int32 (measured: benchmarks/RESULTS.md, "Measurements behind the code's choices").
    """
    valid = jnp.where(mask > 0, jnp.float32(1), jnp.float32(0))
    count = jnp.sum(valid, axis=-1)
    u = jax.random.uniform(key, count.shape)
    r = jnp.minimum(jnp.floor(u * count), jnp.maximum(count - 1, 0)).astype(jnp.int32)
    idx = jax.lax.cond(jnp.all(count == valid.shape[-1]), lambda: r, lambda: _rth_valid(valid, r))
    return jnp.where(count > 0, idx, 0).astype(jnp.int32)


def _running_count(x):
    """int32 [..., W]: the inclusive running sum of 0/1 or small counts ``x`` [..., W]
    along the last axis, as a product with an upper triangular matrix of ones:
    exact (integer products and sums below 2^24, in float32 at HIGHEST precision)
    and on CPU much faster than XLA's cumsum, a windowed reduction."""
    w = x.shape[-1]
    upper = jnp.triu(jnp.ones((w, w), jnp.float32))
    return jnp.matmul(x.astype(jnp.float32), upper, precision=jax.lax.Precision.HIGHEST).astype(jnp.int32)


def _rth_valid(valid, r):
    """int32 [...]: the index of the ``r``-th (0-based) valid entry of each row of
    ``valid`` float32 0/1 [..., K] (rows need ``r`` < their count of valid
    entries; other rows give an unspecified index in 0..K-1).

    K <= ``_ONE_COUNT_MAX_K``: one running count over K; the index is the
    number of entries whose running count is at most r (a float sum, which
    XLA:CPU runs faster than an argmax). Larger: the rows split into blocks of W = ceil(sqrt(K)) entries;
    a running count over the blocks finds the block holding the r-th entry,
    a running count inside it the entry (about 2K multiply-adds per row
    instead of K^2). Both give the same index.
    """
    *batch, k = valid.shape
    if k <= _ONE_COUNT_MAX_K:
        below = jnp.where(_running_count(valid) <= r[..., None], jnp.float32(1), jnp.float32(0))
        return jnp.sum(below, axis=-1).astype(jnp.int32)
    valid = valid > 0
    w = max(1, int(np.ceil(np.sqrt(k))))
    nb = -(-k // w)
    v = jnp.pad(valid, [(0, 0)] * len(batch) + [(0, nb * w - k)]).reshape(*batch, nb, w)
    counts = jnp.sum(v, axis=-1, dtype=jnp.int32)  # [..., nb]
    through = _running_count(counts)  # valid entries up to and including each block
    block = jnp.minimum(jnp.sum(through <= r[..., None], axis=-1), nb - 1)  # first block past r
    before = jnp.take_along_axis(through - counts, block[..., None], axis=-1)[..., 0]
    row = jnp.take_along_axis(v, block[..., None, None], axis=-2)[..., 0, :]  # [..., w]
    hit = row & (_running_count(row) - 1 == (r - before)[..., None])
    return (block * w + jnp.argmax(hit, axis=-1)).astype(jnp.int32)
