"""Foundation's ``components/utils.py``: the tax-annealing helpers, on numpy values.

Follows ``ai_economist/foundation/components/utils.py`` of ai-economist 1.7.1;
the arithmetic is jaxecon's (``PeriodicBracketTax`` anneals with the same
formula inside jit).
"""

from __future__ import annotations

import numpy as np

from jaxecon.components.redistribution import annealed_tax_limit as _annealed_tax_limit


def annealed_tax_limit(completions, warmup_period, slope, final_max_tax_value=1.0):
    """The highest tax rate allowed after ``completions`` episodes.

    ``final_max_tax_value * clip(slope * (completions - warmup_period), 0, 1)``:
    0 until ``warmup_period`` completions, then rising by ``slope`` of the full
    value per completion.

    Args:
        completions: int (or array) >= 0, episodes completed.
        warmup_period: int; a negative value allows taxes from the start.
        slope: float, fraction of the full value unmasked per completion.
        final_max_tax_value: float, the limit at the end of annealing.
    Returns:
        float64 numpy scalar (or array shaped like ``completions``).
    """
    return np.asarray(
        _annealed_tax_limit(
            np.asarray(completions, np.float64), float(warmup_period), float(slope),
            np.asarray(final_max_tax_value, np.float64),
        ),
        np.float64,
    )


def annealed_tax_mask(completions, warmup_period, slope, tax_values):
    """Which of ``tax_values`` are allowed after ``completions`` episodes.

    A value is allowed when ``|value| <= annealed_tax_limit(completions,
    warmup_period, slope, max |tax_values|)``: zero always, the most extreme
    values last.

    Args:
        completions, warmup_period, slope: as ``annealed_tax_limit``.
        tax_values: sequence of floats, the tax value of each action.
    Returns:
        float32 [len(tax_values)] of 0 / 1.
    """
    values = np.abs(np.asarray(tax_values, np.float64))
    limit = annealed_tax_limit(completions, warmup_period, slope, np.max(values))
    return np.less_equal(values, limit).astype(np.float32)
