"""Foundation's ``scenarios/utils/rewards.py`` path: jaxecon's reward functions
(``jaxecon.rewards``; same names and arguments, JAX arrays in and out)."""

from jaxecon.rewards import (
    coin_eq_times_productivity,
    coin_minus_labor_cost,
    inv_income_weighted_coin_endowments,
    inv_income_weighted_utility,
    isoelastic_coin_minus_labor,
)

__all__ = [
    "isoelastic_coin_minus_labor", "coin_minus_labor_cost", "coin_eq_times_productivity",
    "inv_income_weighted_coin_endowments", "inv_income_weighted_utility",
]
