"""Episode metrics as scalar functions of a ``Rollout`` (differentiable).

Formulas live in ``jaxecon.rewards`` and ``jaxecon.social_metrics`` (Foundation's
``scenarios/utils/{rewards,social_metrics}.py``; Zheng et al. 2022, "The AI
Economist", Science Advances: equality eq(x) = 1 - Gini, productivity = total
coin, SWF eq * prod and inverse-income-weighted utility); this module only
says which state they are evaluated on. Coin is the agents' total endowment
(inventory + escrow) after the last step. The COVID-19 scenario moves no
Coin, so its coin-based metrics are 0: use its ``env.metrics`` keys (e.g.
``"usa/deaths (thousands)"``) or ``planner_return`` there.

Names (``METRIC_NAMES``; each value is a float [] array):
    productivity: total agent Coin (coin).
    equality: 1 - Gini of agent Coin (unitless, in [0, 1]).
    coin_eq_times_productivity: SWF (w * equality + 1 - w) * mean Coin with
        w = 1 - params.scenario.mixing_weight_gini_vs_coin (1 if the scenario
        has no such parameter) (coin).
    inv_income_weighted_coin_endowments: sum_i pi_i Coin_i, pi ~ 1 / max(1, Coin) (coin).
    inv_income_weighted_utility: sum_i pi_i U_i, pi ~ 1 / max(1, income), with
        income = SimpleLabor's pre-tax ``production`` when the economy has
        SimpleLabor (one-step economy), else Coin (utility units).
    planner_objective: the planner's optimization metric (the scenario's own
        SWF, its ``planner_reward_type``) after the last step.
    planner_return: sum of the planner's rewards (= objective change); needs
        a planner (every planner gets the scenario's planner reward).
    mean_agent_utility: mean of the agents' optimization metric (utility) at the end.
    mean_agent_return: mean over the mobile agents (every mobile group's) of
        the sum of their rewards.
    mean_labor: mean agent Labor (labor units).
    tax_revenue: PeriodicBracketTax's total collected taxes (coin); needs
        that component.
    agent_utility/<i>, agent_return/<i>, agent_coin/<i>: agent i's utility,
        return, Coin.
Also every key of ``env.metrics(state, params)`` (Foundation's metric names,
e.g. ``"social/productivity"``, ``"PeriodicTax/total_collected_taxes"``).
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp

from jaxecon import rewards, social_metrics
from jaxecon.analysis.rollout import Rollout

TAX = "PeriodicBracketTax"


def _coin(env, r: Rollout):
    return r.state.total_endowment("Coin")


def agent_utilities(env, state, params) -> jax.Array:
    """float [n]: each agent's optimization metric (utility) in ``state``.

    Raises:
        ValueError: if the scenario defines no ``optimization_metrics``.
    """
    return env.scenario.optimization_metrics(state, params)[: env.n_agents]


def planner_objective(env, state, params) -> jax.Array:
    """float []: the planner's optimization metric (the scenario's SWF) in ``state``."""
    return env.scenario.optimization_metrics(state, params)[-1]


def _equality_weight(params):
    w = getattr(params.scenario, "mixing_weight_gini_vs_coin", None)
    return 1.0 if w is None else 1 - w


def _income_for_weights(env, r: Rollout):
    if env.has_component("SimpleLabor"):
        return env.get_component("SimpleLabor").production(r.state)
    return _coin(env, r)


def _agent_returns(env, r: Rollout):
    """float [n]: each mobile agent's return, in agent order (the mobile groups' in turn)."""
    return jnp.concatenate([r.returns[g.name] for g in env.mobile_groups])


def _planner_return(env, r: Rollout, params):
    planners = env.planner_groups
    if not planners:
        raise ValueError("metric 'planner_return' needs a planner; this economy has none (n_planners=0)")
    return r.returns[planners[0].name]  # every planner gets the scenario's planner reward


def _tax_revenue(env, r: Rollout, params):
    if not env.has_component(TAX):
        raise ValueError(f"metric 'tax_revenue' needs the {TAX} component; this economy has "
                         f"{[c.name for c in env.components]}")
    return r.state.components[TAX].total_collected_taxes


METRICS: dict[str, Callable] = {
    "productivity": lambda env, r, p: social_metrics.get_productivity(_coin(env, r)),
    "equality": lambda env, r, p: social_metrics.get_equality(_coin(env, r)),
    "coin_eq_times_productivity": lambda env, r, p: rewards.coin_eq_times_productivity(
        _coin(env, r), _equality_weight(p)
    ),
    "inv_income_weighted_coin_endowments": lambda env, r, p: rewards.inv_income_weighted_coin_endowments(
        _coin(env, r)
    ),
    "inv_income_weighted_utility": lambda env, r, p: rewards.inv_income_weighted_utility(
        _income_for_weights(env, r), agent_utilities(env, r.state, p)
    ),
    "planner_objective": lambda env, r, p: planner_objective(env, r.state, p),
    "planner_return": _planner_return,
    "mean_agent_utility": lambda env, r, p: jnp.mean(agent_utilities(env, r.state, p)),
    "mean_agent_return": lambda env, r, p: jnp.mean(_agent_returns(env, r)),
    "mean_labor": lambda env, r, p: jnp.mean(r.state.endogenous["Labor"]),
    "tax_revenue": _tax_revenue,
}
METRIC_NAMES = tuple(METRICS)
PER_AGENT = ("agent_utility", "agent_return", "agent_coin")


def _per_agent_metric(env, name):
    """``(kind, agent index)`` for a per-agent name like ``"agent_coin/3"``, else None.

    Raises:
        ValueError: the index is not 0..n_agents - 1.
    """
    kind, _, idx = name.partition("/")
    if kind not in PER_AGENT or not idx.isdigit():
        return None
    if not 0 <= int(idx) < env.n_agents:
        raise ValueError(f"metric {name!r}: agent index must be in 0..{env.n_agents - 1}")
    return kind, int(idx)


def _per_agent(env, kind, i, r, p):
    if kind == "agent_utility":
        return agent_utilities(env, r.state, p)[i]
    if kind == "agent_return":
        return _agent_returns(env, r)[i]
    return _coin(env, r)[i]


def available_metrics(env) -> list[str]:
    """Every metric name ``metric_value`` accepts for ``env`` (no computation:
    shapes only, via ``jax.eval_shape``)."""
    names = list(METRIC_NAMES) + [f"{k}/<i>" for k in PER_AGENT]
    params = env.default_params
    _, state = jax.eval_shape(lambda k: env.reset(k, params), jax.random.key(0))
    names += sorted(jax.eval_shape(lambda s: env.metrics(s, params), state))
    return names


def check_metric_name(env, name) -> None:
    """Raise ``ValueError`` (listing the allowed names) unless ``metric_value``
    accepts ``name`` for ``env``. Cheap: traces only reset and metrics' shapes."""
    if not isinstance(name, str):
        raise ValueError(f"metric must be a metric name (str), got {name!r}")
    if name in METRICS or _per_agent_metric(env, name) is not None:
        return
    allowed = available_metrics(env)
    if name not in allowed:
        raise ValueError(f"unknown metric {name!r}; allowed: {allowed}")


def metric_value(env, name: str, r: Rollout, params) -> jax.Array:
    """The metric ``name`` (see the module docstring) of rollout ``r``: float [].

    Raises:
        ValueError: unknown name (the message lists the allowed ones), a
            per-agent index out of range, or a metric the economy cannot
            compute (e.g. tax_revenue without PeriodicBracketTax).
    """
    if name in METRICS:
        return METRICS[name](env, r, params)
    per_agent = _per_agent_metric(env, name)
    if per_agent is not None:
        return _per_agent(env, *per_agent, r, params)
    found = env.metrics(r.state, params)
    if name in found:
        return jnp.asarray(found[name])
    raise ValueError(
        f"unknown metric {name!r}; allowed: {list(METRIC_NAMES) + [k + '/<i>' for k in PER_AGENT]} "
        f"or one of env.metrics: {sorted(found)}"
    )


def episode_metrics(env, r: Rollout, params, names=None) -> dict:
    """``{name: float []}`` for ``names`` (default: every ``METRIC_NAMES`` entry
    this economy supports)."""
    if names is None:
        names = [n for n in METRIC_NAMES if n != "tax_revenue" or env.has_component(TAX)]
    return {n: metric_value(env, n, r, params) for n in names}
