"""Differentiable analysis of economies: rollouts, metrics, gradients, sweeps.

One concern per module:

- ``params``: address parts of ``EnvParams`` by dotted path
  (``"components.PeriodicBracketTax.fixed_rates"``).
- ``rollout``: an episode as one pure function (fixed actions or a policy).
- ``metrics``: episode metrics (productivity, equality, planner objectives,
  utilities, tax revenue, and Foundation's ``env.metrics``).
- ``gradients``: ``jax.grad`` of a metric w.r.t. any part of ``EnvParams``.
- ``sweeps``: ``jax.vmap`` of a metric over a batch of parameter settings.
- ``relaxations``: temperature-controlled relaxations of discrete dynamics
  (soft tax brackets; softmax best responses in the one-step economy).
- ``optimal_taxation``: gradient-ascent tax design (and a search on the
  planner's rate grid) vs the Saez formula and the US federal schedule in
  the one-step economy.

See docs/differentiability.md for which gradients are exact and which are zero.
"""

from jaxecon.analysis.gradients import grad_metric, make_metric_grad, metric_fn, value_and_grad_metric
from jaxecon.analysis.metrics import (
    METRIC_NAMES,
    agent_utilities,
    available_metrics,
    episode_metrics,
    metric_value,
    planner_objective,
)
from jaxecon.analysis.optimal_taxation import (
    GridSearchResult,
    TaxOptimizationResult,
    evaluate_schedule,
    grid_search_one_step_taxes,
    make_one_step_economy,
    optimize_one_step_taxes,
    rate_grid,
    saez_schedule,
    us_federal_rates,
)
from jaxecon.analysis.params import get_param, param_paths, set_param
from jaxecon.analysis.relaxations import (
    OneStepOutcome,
    best_response_actions,
    choice_probabilities,
    one_step_outcome,
    with_bracket_temperature,
)
from jaxecon.analysis.rollout import Rollout, make_rollout_fn, rollout
from jaxecon.analysis.sweeps import make_sweep, sweep

__all__ = [
    "METRIC_NAMES", "GridSearchResult", "OneStepOutcome", "Rollout", "TaxOptimizationResult",
    "agent_utilities", "available_metrics", "best_response_actions", "choice_probabilities", "episode_metrics",
    "evaluate_schedule", "get_param", "grad_metric", "grid_search_one_step_taxes", "make_metric_grad",
    "make_one_step_economy", "make_rollout_fn", "make_sweep", "metric_fn", "metric_value", "one_step_outcome",
    "optimize_one_step_taxes", "param_paths", "planner_objective", "rate_grid", "rollout", "saez_schedule",
    "set_param", "sweep", "us_federal_rates", "value_and_grad_metric", "with_bracket_temperature",
]
