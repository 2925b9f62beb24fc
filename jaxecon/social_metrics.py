"""Social metrics over coin endowments: Gini, equality, productivity.

Follows ``ai_economist/foundation/scenarios/utils/social_metrics.py``
(AI Economist paper, Zheng et al. 2020, eq. for eq(x) = 1 - gini(x)).
All functions are jittable and differentiable; inputs are float [n] coin.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.backend import sort_floats


def get_gini(endowments: jax.Array) -> jax.Array:
    """Normalised Gini index of float [n] endowments (coin): float [].

    1 means one agent owns everything, 0 perfect equality. As in Foundation,
    n < 30 uses the exact pairwise formula divided by (n-1)/n; n >= 30 uses the
    sorted-cumsum approximation (which gives 0.935, not 1, for one-has-all at
    n = 30). ``1e-10`` in the denominators avoids 0/0 (all-zero gives 0).

    Cost O(n log n) for n >= 30: Foundation's sum of the running sums of the
    sorted endowments s is computed as the weighted sum
    sum_i (n - i) s_i (the same number; float rounding may differ in the
    last bits), as XLA:CPU computes a cumsum as a windowed reduction,
    O(n^2); the sort is ``backend.sort_floats``.
    """
    x = jnp.asarray(endowments)
    n = x.shape[0]
    if n < 30:
        diff = jnp.sum(jnp.abs(x[:, None] - x[None, :]))
        norm = 2 * n * jnp.sum(x)
        return diff / (norm + 1e-10) / ((n - 1) / n)
    s = sort_floats(x)
    weights = np.arange(n, 0, -1).astype(s.dtype)  # s_i is in the running sums i..n-1
    return 1 - (2 / (n + 1)) * (jnp.dot(weights, s) / (jnp.sum(s) + 1e-10))


def get_equality(endowments: jax.Array) -> jax.Array:
    """Equality = 1 - Gini of float [n] endowments: float [] in [0, 1]."""
    return 1 - get_gini(endowments)


def get_productivity(coin_endowments: jax.Array) -> jax.Array:
    """Total coin of float [n] endowments: float [] (coin)."""
    return jnp.sum(coin_endowments)
