"""The one-step economy's learned planner against the schedules of ``jaxecon.analysis``.

``jaxecon train --config one_step`` trains the agents' hours and the planner's
bracket rates with two-level PPO (``configs/one_step.yaml``). This module
scores what the planner learned the way ``jaxecon.analysis.optimal_taxation``
scores its schedules: every schedule, the learned one included, is evaluated
with the agents' exact (argmax) best responses stepped through the economy
(``evaluate_schedule``), so the comparison does not depend on how well the
trained agents learned to respond. The schedules compared:

- ``learned``: the planner's greedy rates (its most probable action per
  bracket) on the first step of an episode;
- ``gradient optimum``: gradient ascent on the rates through the agents'
  softmax best responses (``optimize_one_step_taxes``);
- ``grid search``: coordinate ascent on the planner's own rate grid, every
  schedule scored exactly (``grid_search_one_step_taxes``, from the gradient
  optimum, Saez, US federal and no taxes): it finds what the gradient misses
  where an agent's best response jumps;
- ``Saez``: the Saez formula iterated against the agents' best responses, as
  Foundation's ``saez`` tax model estimates it (``saez_schedule``);
- ``US federal`` (the 2018 single-filer rates) and ``free market`` (no tax).

The analysis runs on the run's own economy with its PeriodicBracketTax
switched to ``tax_model: fixed-bracket-rates`` (``analysis_env_config``): the
same agents, skills, utilities and brackets.

The best schedule known is the better of the gradient optimum and the grid
search. Over several training seeds, ``compare_runs`` gives per run the
table above and, over the runs, the mean and 95% confidence interval
(Student t) of the learned objective as a share of the best schedule known,
of the share of the no-tax-to-best gap it closes, and of its margins over
Saez and US federal; ``format_text`` prints it (what ``jaxecon evaluate``
shows for one-step runs).

Usage::

    from jaxecon.training.one_step import compare_run
    res = compare_run("runs/one_step/phase2-learned")
    res["objective"]["learned"] / best_known(res)
"""

from __future__ import annotations

import copy
import functools
import json

import jax
import jax.numpy as jnp
import numpy as np

import jaxecon
from jaxecon.components.tax_schedules import US_FEDERAL_RATES
from jaxecon.training.curriculum import is_one_step, tax_component_kwargs
from jaxecon.wrappers.base import unwrap_state

__all__ = ["SCHEDULES", "analysis_env_config", "best_known", "compare", "compare_run", "compare_runs",
           "format_text", "planner_rates"]

#: The schedules ``compare`` scores, in the order of its table.
SCHEDULES = ("learned", "gradient optimum", "grid search", "Saez", "US federal", "free market")

#: The analysis' schedules that bound the optimum from below.
_SEARCHES = ("gradient optimum", "grid search")

_TAX = "PeriodicBracketTax"


def analysis_env_config(env: dict) -> dict:
    """The run's economy with fixed bracket rates: what ``jaxecon.analysis`` optimises.

    Args:
        env: the training config's ``env`` (a one-step economy whose
            PeriodicBracketTax has ``tax_model: model_wrapper``).
    Returns:
        a copy of ``env`` whose tax component has ``tax_model:
        fixed-bracket-rates`` (the 2018 US rates as its placeholder schedule)
        and no annealing.
    Raises:
        ValueError: ``env`` is not a one-step economy or has no PeriodicBracketTax.
    """
    if not is_one_step(env):
        raise ValueError(f"not a one-step economy: scenario_name is {env.get('scenario_name')!r}")
    env = copy.deepcopy(env)
    tax = tax_component_kwargs(env)
    if tax is None:
        raise ValueError(f"the one-step economy needs a {_TAX} component")
    tax.pop("tax_annealing_schedule", None)
    tax.update(tax_model="fixed-bracket-rates", fixed_bracket_rates=list(US_FEDERAL_RATES),
               disable_taxes=False)
    return env


def planner_rates(ppo, policies: dict, key, mode: str = "greedy") -> np.ndarray:
    """The bracket rates the planner's policy sets on the first step of ``ppo.num_envs`` episodes.

    Args:
        ppo: ``PPO`` of the one-step economy (its planner trained).
        policies: ``{group: PolicyState}`` (``RunnerState.policies``).
        key: PRNG key (the economies' and, for ``"sample"``, the policy's).
        mode: ``"greedy"`` (the most probable rate per bracket) or ``"sample"``.
    Returns:
        float64 ``[num_envs, B]``: the rates in force after the planner's step
        (``PeriodicBracketTax``'s ``curr_rates`` observation).
    """
    k_reset, k_act, k_step = jax.random.split(key, 3)

    @jax.jit
    def rates(policies):
        obs, state = ppo.adapter.reset(k_reset)
        first = jnp.ones((ppo.num_envs,), bool)
        _, actions, _, _ = ppo.act(policies, {}, obs, first, k_act, ppo.role_modes(agents="noop", planner=mode))
        _, state, _, _, _ = ppo.adapter.step(k_step, state, actions)
        return unwrap_state(state).components[_TAX].curr_rates_obs

    return np.asarray(rates(policies), np.float64)


@functools.lru_cache(maxsize=8)
def _reference(env_json: str, n_iterations: int) -> tuple:
    """(analysis env, params, {schedule: rates}) of the analysis' schedules, once per economy."""
    from jaxecon.analysis import optimal_taxation as ot

    env = jaxecon.make_from_config(analysis_env_config(json.loads(env_json)))
    params = env.default_params
    n_b = len(env.get_component(_TAX).bracket_cutoffs)
    schedules = {
        "gradient optimum": np.asarray(ot.optimize_one_step_taxes(env, params, n_iterations=n_iterations).rates),
        "Saez": np.asarray(ot.saez_schedule(env, params, n_iterations=n_iterations).rates),
        "US federal": ot.us_federal_rates(env),
        "free market": np.zeros(n_b),
    }
    starts = [schedules[k] for k in ("gradient optimum", "Saez", "US federal", "free market")]
    schedules["grid search"] = np.asarray(
        ot.grid_search_one_step_taxes(env, params, starts, n_iterations=n_iterations).rates)
    return env, params, {k: schedules[k] for k in SCHEDULES[1:]}


def best_known(result: dict) -> float:
    """The best objective of ``compare``'s searches: the gradient optimum or the grid search."""
    return max(result["objective"][k] for k in _SEARCHES)


def _share_and_gap(result: dict) -> tuple:
    """``compare``'s learned objective as a share of ``best_known``, and the share of the gap from
    no taxes to it that the learned schedule closes: (learned - free market) / (best - free market)."""
    o, best = result["objective"], best_known(result)
    return o["learned"] / best, (o["learned"] - o["free market"]) / (best - o["free market"])


def compare(env_config: dict, learned_rates, *, n_iterations: int = 30) -> dict:
    """Score the learned rates and the analysis' schedules with exact best responses.

    Args:
        env_config: the training run's ``env``.
        learned_rates: float ``[B]`` (or ``[N, B]``: each row is scored and the
            mean reported under ``"learned"``).
        n_iterations: the rebate fixed-point iterations of the best responses.
    Returns:
        ``{"rates": {schedule: list of B floats}, "objective": {schedule: float},
        "productivity": {...}, "equality": {...}}`` for ``SCHEDULES``
        (``objective`` is the planner's, ``planner_reward_type``). The
        analysis' schedules are computed once per economy and process.
    Raises:
        ValueError: as ``analysis_env_config``.
    """
    from jaxecon.analysis import optimal_taxation as ot

    env, params, schedules = _reference(json.dumps(env_config, sort_keys=True), n_iterations)
    learned = np.atleast_2d(np.asarray(learned_rates, np.float64))
    out = {"rates": {}, "objective": {}, "productivity": {}, "equality": {}}
    rows = [("learned", learned)] + [(label, np.atleast_2d(np.asarray(r, np.float64)))
                                     for label, r in schedules.items()]
    for label, rates in rows:  # each row of rates scored; the mean reported
        scored = [ot.evaluate_schedule(env, params, r, n_iterations=n_iterations) for r in rates]
        out["rates"][label] = rates.mean(axis=0).tolist()
        for name, key in (("objective", "planner_objective"), ("productivity", "productivity"),
                          ("equality", "equality")):
            out[name][label] = float(np.mean([s[key] for s in scored]))
    return out


def compare_run(run_dir, *, seed: int = 0) -> dict:
    """``compare`` for the latest checkpoint of a ``jaxecon train --config one_step`` run.

    The learned schedule is the planner's greedy rates (identical in every
    economy: the planner observes the same reset state in each).

    Returns:
        ``compare``'s dict plus ``"step"`` (the checkpoint's update count).
    Raises:
        FileNotFoundError: no checkpoint; ValueError: not a one-step economy.
    """
    from jaxecon.training import checkpoint as ckpt
    from jaxecon.training.config import config_from_dict
    from jaxecon.training.ppo import PPO

    cfg = config_from_dict(ckpt.read_config(run_dir))
    analysis_env_config(cfg.env)  # fail early on another economy
    ppo = PPO(cfg, jaxecon.make_from_config(cfg.env))
    runner = ckpt.restore_runner(run_dir, ppo, cfg)
    rates = planner_rates(ppo, runner.policies, jax.random.key(seed))
    out = compare(cfg.env, rates[0])
    out["step"] = int(runner.updates)
    return out


def compare_runs(run_dirs, log=None) -> dict:
    """``compare_run`` for each run, and the learned planner's standing over the runs.

    Args:
        run_dirs: ``jaxecon train --config one_step`` run directories (one per training seed).
        log: called with a line of progress text (e.g. ``print``); None: silent.
    Returns:
        ``{"runs": [{"run", "seed", **compare_run}], "share_of_best": mean_ci,
        "gap_closed": mean_ci, "minus_saez": mean_ci, "minus_us_federal": mean_ci}``
        with ``mean_ci`` = ``{"mean", "ci" (95% half-width, NaN for one run),
        "n"}`` of: the learned objective / the best known (``best_known``); the
        share of the gap from no taxes to the best known that the learned
        schedule closes, (learned - free market) / (best - free market); the
        learned objective - Saez's; - US federal's.
    Raises:
        FileNotFoundError: a run without a checkpoint; ValueError: not a one-step economy.
    """
    from jaxecon.training import checkpoint as ckpt
    from jaxecon.training.comparison import mean_ci

    rows = []
    for run in run_dirs:
        if log is not None:
            log(f"{run}: the planner's greedy rates and the analysis' schedules, scored with exact "
                "best responses ...")
        seed = ckpt.read_config(run)["trainer"]["seed"]
        rows.append({"run": str(run), "seed": seed, **compare_run(run)})
        obj = rows[-1]["objective"]
        if log is not None:
            log("  " + ", ".join(f"{s} {obj[s]:.3f}" for s in SCHEDULES))
    obj = [r["objective"] for r in rows]
    share, gap = zip(*map(_share_and_gap, rows))
    return {
        "runs": rows,
        "share_of_best": mean_ci(list(share)),
        "gap_closed": mean_ci(list(gap)),
        "minus_saez": mean_ci([o["learned"] - o["Saez"] for o in obj]),
        "minus_us_federal": mean_ci([o["learned"] - o["US federal"] for o in obj]),
    }


def format_text(result: dict) -> str:
    """``compare_runs``'s result as a table (one row per run) and its summary lines."""
    head = ["seed"] + list(SCHEDULES) + ["learned / best", "gap closed"]
    body = []
    for r in result["runs"]:
        body.append([str(r["seed"])] + [f"{r['objective'][s]:.3f}" for s in SCHEDULES]
                    + [f"{x:.3f}" for x in _share_and_gap(r)])
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    lines = ["the planner's objective (inverse-income-weighted utility unless configured otherwise), every "
             "schedule scored with the agents' exact best responses:",
             "  ".join(h.rjust(w) for h, w in zip(head, widths))]
    lines += ["  ".join(c.rjust(w) for c, w in zip(b, widths)) for b in body]
    ci = lambda m: f" +- {m['ci']:.3f} (95% CI over {m['n']} seeds)" if m["n"] > 1 else " (one seed)"  # noqa: E731
    for label, key, fmt in (("learned / best known (the better of gradient optimum and grid search)",
                             "share_of_best", ".3f"),
                            ("share of the no-tax-to-best gap closed", "gap_closed", ".3f"),
                            ("learned - Saez", "minus_saez", "+.3f"),
                            ("learned - US federal", "minus_us_federal", "+.3f")):
        m = result[key]
        lines.append(f"{label}: {m['mean']:{fmt}}{ci(m)}")
    for r in result["runs"]:
        lines.append(f"seed {r['seed']}: learned rates {[round(x, 2) for x in r['rates']['learned']]}; "
                     f"gradient optimum {[round(x, 2) for x in r['rates']['gradient optimum']]}; "
                     f"grid search {[round(x, 2) for x in r['rates']['grid search']]}")
    return "\n".join(lines)
