"""Taxes and redistribution, under Foundation's module name.

``ai_economist/foundation/components/redistribution.py`` holds
``PeriodicBracketTax`` and ``WealthRedistribution``; jaxecon splits that
module by job and re-exports its public names here, so
``from jaxecon.components.redistribution import PeriodicBracketTax`` keeps
working:

- ``jaxecon.components.tax_schedules``: bracket cutoffs, taxes owed, marginal
  rates (hard and soft), the annealed rate limit;
- ``jaxecon.components.saez``: the "saez" tax model's estimator and its state;
- ``jaxecon.components.periodic_bracket_tax``: ``PeriodicBracketTax``;
- ``jaxecon.components.wealth_redistribution``: ``WealthRedistribution``.
"""

from jaxecon.components.periodic_bracket_tax import (
    TAX_MODELS,
    PeriodicBracketTax,
    PeriodicBracketTaxParams,
    PeriodicBracketTaxState,
)
from jaxecon.components.saez import (
    PARETO_WEIGHT_TYPES,
    SAEZ_BUFFER_SIZE,
    SAEZ_ELAS_DF,
    SAEZ_N_BINS,
    SaezState,
)
from jaxecon.components.tax_schedules import (
    BRACKET_SPACINGS,
    US_FEDERAL_CUTOFFS_USD,
    US_FEDERAL_RATES,
    annealed_tax_limit,
    bracket_cutoffs,
    bracket_index,
    marginal_rate,
    soft_marginal_rate,
    soft_taxes_due,
    taxes_due,
)
from jaxecon.components.wealth_redistribution import WealthRedistribution

__all__ = [
    "BRACKET_SPACINGS", "PARETO_WEIGHT_TYPES", "SAEZ_BUFFER_SIZE", "SAEZ_ELAS_DF", "SAEZ_N_BINS",
    "TAX_MODELS", "US_FEDERAL_CUTOFFS_USD", "US_FEDERAL_RATES",
    "PeriodicBracketTax", "PeriodicBracketTaxParams", "PeriodicBracketTaxState", "SaezState",
    "WealthRedistribution",
    "annealed_tax_limit", "bracket_cutoffs", "bracket_index", "marginal_rate",
    "soft_marginal_rate", "soft_taxes_due", "taxes_due",
]
