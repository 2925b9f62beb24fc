"""Agent utilities and planner social-welfare functions.

Follows ``ai_economist/foundation/scenarios/utils/rewards.py`` (AI Economist
paper, Zheng et al. 2020: isoelastic utility eq. 2, SWF eq. 4). Jittable and
differentiable; coin in coin units, labor in labor units.
"""

from __future__ import annotations

import jax.numpy as jnp

from jaxecon import social_metrics


def isoelastic_coin_minus_labor(coin_endowment, total_labor, isoelastic_eta, labor_coefficient):
    """Utility (coin^(1-eta) - 1) / (1 - eta) - labor_coefficient * labor.

    Args:
        coin_endowment: float [...] coin (>= 0).
        total_labor: float [...] labor.
        isoelastic_eta: float [] in [0, 1].
        labor_coefficient: float [] disutility per unit of labor.
    Returns:
        float [...] utility.

    With eta == 1 Foundation intends log(max(1, coin)) but crashes (quirk Q13,
    ``np.max(1, coin)``); jaxecon computes log(max(1, coin)). The eta == 1
    branch is selected with ``where`` on a safe denominator, so gradients stay
    finite for every eta. At coin <= 0 the gradient in coin is 0 (the true
    right derivative is +inf), so episodes that start with no coin do not
    turn every parameter gradient into NaN.
    """
    one = isoelastic_eta == 1.0
    safe = jnp.where(one, 0.5, 1.0 - isoelastic_eta)
    # coin^(1-eta) has an infinite slope at coin = 0; the double where keeps the
    # value (0) and makes the gradient there 0 instead of inf * 0 = NaN.
    pos = coin_endowment > 0
    coin_safe = jnp.where(pos, coin_endowment, 1.0)
    util_iso = (jnp.where(pos, jnp.power(coin_safe, safe), 0.0) - 1) / safe
    util_log = jnp.log(jnp.maximum(1.0, coin_endowment))
    util_c = jnp.where(one, util_log, util_iso)
    return util_c - total_labor * labor_coefficient


def coin_minus_labor_cost(coin_endowment, total_labor, labor_exponent, labor_coefficient):
    """Utility coin - labor_coefficient * labor ** labor_exponent (float [...])."""
    return coin_endowment - jnp.power(total_labor, labor_exponent) * labor_coefficient


def coin_eq_times_productivity(coin_endowments, equality_weight):
    """SWF (w * equality + 1 - w) * mean coin over float [n] endowments: float []."""
    n = coin_endowments.shape[0]
    prod = social_metrics.get_productivity(coin_endowments) / n
    equality = equality_weight * social_metrics.get_equality(coin_endowments) + (1 - equality_weight)
    return equality * prod


def _inv_income_weights(coin_endowments):
    w = 1 / jnp.maximum(coin_endowments, 1)
    return w / jnp.sum(w)


def inv_income_weighted_coin_endowments(coin_endowments):
    """SWF sum(coin * pi), pi proportional to 1 / max(coin, 1): float []."""
    return jnp.sum(coin_endowments * _inv_income_weights(coin_endowments))


def inv_income_weighted_utility(coin_endowments, utilities):
    """SWF sum(utility * pi), pi proportional to 1 / max(coin, 1): float []."""
    return jnp.sum(utilities * _inv_income_weights(coin_endowments))
