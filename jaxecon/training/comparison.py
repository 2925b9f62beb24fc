"""The planner comparison over training seeds: the AI Economist's table, with confidence intervals.

The AI Economist's headline result (Zheng et al. 2020, arXiv:2004.13332; the
figure ``tutorials/assets/prod_eq_welfare.svg`` of salesforce/ai-economist)
compares, in the 4-agent Gather-Trade-Build economy, the learned planner
with the Saez formula, the 2018 US federal schedule and the free market on
equality x productivity, productivity and equality (``PAPER_2020``). Each
planner there has its own agents, trained under it from the same phase-1
agents; so here (``curriculum.PLANNERS``: one phase-2 run per planner).

``compare(paths)`` finds the training runs under ``paths``
(``find_runs``: protocol directories of one seed each, holding ``phase1/``
and ``phase2-<planner>/``, directories of those, or single runs), groups them
by planner (``curriculum.planner_of`` of each run's ``config.yaml``) and
training seed (``trainer.seed``), and evaluates each run's latest checkpoint
(``evaluate``: ``num_envs x episodes`` episodes of the run's own economy with
its warm-ups finished, ``evaluation_env_config``; the saez planner continues
the income buffer of its run's economies, read from the checkpoint; every run with the same evaluation seed, so that the
planners meet the same economies and random streams):

- per planner (agents sampled, the learned planner sampled): per seed the
  mean over its episodes of each of ``METRICS`` (productivity, equality,
  equality x productivity, inverse-income-weighted utility) and ``EXTRA``;
  over seeds the mean and the 95% confidence interval (Student t with n - 1
  degrees of freedom: ``mean_ci``);
- the learned planner minus each baseline, paired by seed (both runs start
  from that seed's phase-1 checkpoint; ``ValueError`` if they do not), with
  its 95% confidence interval, and in % of the baseline;
- phase 1's agents: ``trained (sampled)`` and ``trained (greedy)`` per seed
  (mean and interval over seeds), ``random`` and ``no-op`` once per economy
  (they do not depend on the training seed; standard errors over episodes);
  the same for the learned planner's phase-2 agents (``PHASE2_AGENT_ROWS``:
  sampled, greedy and NO-OP, the planner sampling its rates).

With one seed there is no interval over seeds: the tables give the standard
error over that seed's episodes instead (``stderr``), as ``evaluate`` does
for a single run. ``format_text`` and ``format_markdown`` lay the result out
(the Markdown in the paper's layout, its 2020 figures beside ours, and a
sentence on how the economies' scales differ); ``write_outputs`` writes
``evaluation.json`` and ``evaluation.md``.
"""

from __future__ import annotations

import functools
import json
import math
import os
import pathlib
import time
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from jaxecon.training.config import TrainConfig, load_train_config
from jaxecon.training.curriculum import PLANNERS, planner_of, tax_component_kwargs
from jaxecon.training.evaluate import (
    BRIEF_METRICS,
    brief,
    episode_runner,
    evaluation_env_config,
    SAEZ_MARKER,
    restore_policies,
    row_env_params,
    shown,
    summarize_samples,
)
from jaxecon.training import checkpoint as ckpt

__all__ = ["AGENT_ROWS", "EXTRA", "PHASE2_AGENT_ROWS", "METRICS", "PAPER_2020", "PAPER_ECONOMY", "PAPER_ORDER", "PLANNER_LABELS",
           "RunInfo", "compare", "find_runs", "format_markdown", "format_text", "is_run_dir", "mean_ci",
           "run_economy", "write_outputs"]

#: (name, metric key, unit) of the comparison's columns.
METRICS = BRIEF_METRICS + (
    ("inverse-income-weighted utility", "episode/social_welfare/inv_income_weighted_utility", "utility"),
)

#: Also summarised (JSON only): (name, metric key, unit).
EXTRA = (
    ("agents' return", "a/episode_return", "utility per agent"),
    ("tax revenue", "episode/PeriodicTax/total_collected_taxes", "coin"),
    ("planner's return", "p/episode_return", "reward"),
)

#: Phase 1's rows: (label, agents' mode, depends on the training seed).
AGENT_ROWS = (("trained (sampled)", "sample", True), ("trained (greedy)", "greedy", True),
              ("random", "random", False), ("no-op", "noop", False))

#: The same for the agents of the learned planner's phase-2 runs (the planner samples its rates).
PHASE2_AGENT_ROWS = (("trained (sampled)", "sample", True), ("trained (greedy)", "greedy", True),
                     ("no-op", "noop", False))

#: The paper's 2020 figures (salesforce/ai-economist tutorials/assets/prod_eq_welfare.svg,
#: 4-agent Gather-Trade-Build): equality x productivity and productivity in coin,
#: equality as a fraction.
PAPER_2020 = {
    "free-market": {"equality x productivity": 1278.0, "productivity": 3285.0, "equality": 0.39},
    "us-federal": {"equality x productivity": 1261.0, "productivity": 2656.0, "equality": 0.48},
    "saez": {"equality x productivity": 1435.0, "productivity": 2759.0, "equality": 0.52},
    "learned": {"equality x productivity": 1664.0, "productivity": 2907.0, "equality": 0.57},
}

#: The paper's economy: 4 agents, 25x25 map, 1000-step episodes, 100-step tax periods.
PAPER_ECONOMY = {"n_agents": 4, "world_size": [25, 25], "episode_length": 1000, "period": 100}

#: Row order of the paper's figure, and the rows' names.
PAPER_ORDER = ("free-market", "us-federal", "saez", "learned")
PLANNER_LABELS = {"learned": "AI Economist (learned)", "saez": "Saez formula", "us-federal": "US federal",
                  "free-market": "free market"}


@dataclass(frozen=True)
class RunInfo:
    """A training run found by ``find_runs``.

    Attributes:
        path: its directory.
        cfg: its ``config.yaml``.
        planner: ``curriculum.planner_of(cfg)`` (None: phase 1).
        seed: ``cfg.trainer.seed``.
    """

    path: pathlib.Path
    cfg: TrainConfig
    planner: Optional[str]
    seed: int

    @property
    def phase1(self) -> Optional[str]:
        """The phase-1 checkpoint a phase-2 run started from, or None: its path
        resolved against the current directory, so that a protocol resumed with
        a relative ``--out`` after an absolute one still pairs its runs."""
        src = self.cfg.general.restore_agents
        return None if src is None else os.path.realpath(src)

    @functools.cached_property
    def update(self) -> int:
        """The update of its latest checkpoint (what the evaluation loads), read once."""
        return ckpt.latest_step(self.path / "checkpoints")

    @property
    def finished(self) -> bool:
        """Its latest checkpoint is at the end of the run (``cfg.num_updates``)."""
        return self.update >= self.cfg.num_updates


def is_run_dir(path) -> bool:
    """A training run's directory: ``config.yaml`` and ``checkpoints/``."""
    p = pathlib.Path(path)
    return (p / "config.yaml").is_file() and (p / "checkpoints").is_dir()


def _read_run(path: pathlib.Path) -> RunInfo:
    cfg = load_train_config(path / "config.yaml")
    return RunInfo(path, cfg, planner_of(cfg), cfg.trainer.seed)


def find_runs(paths, max_depth: int = 2) -> list:
    """The training runs under ``paths``, sorted by (phase-1 first, planner, seed).

    Each path is a run directory (``is_run_dir``; its ``checkpoints/`` also
    works), or a directory searched ``max_depth`` levels down for run
    directories (a protocol directory of one seed, or a directory of those).

    Raises:
        FileNotFoundError: a path that does not exist or holds no run.
        ValueError: two runs with the same planner and seed (the message names both).
    """
    found = []
    for path in paths:
        p = pathlib.Path(path)
        if p.name == "checkpoints" and is_run_dir(p.parent):
            p = p.parent
        if not p.is_dir():
            raise FileNotFoundError(f"no directory {str(p)!r}")
        level, runs = [p], []
        for _ in range(max_depth + 1):
            nxt = []
            for d in level:
                if is_run_dir(d):
                    runs.append(d)
                else:
                    nxt.extend(sorted(c for c in d.iterdir() if c.is_dir()))
            level = nxt
        if not runs:
            raise FileNotFoundError(f"{str(p)!r} holds no training run (a directory with config.yaml and "
                                    "checkpoints/, e.g. phase1/ or phase2-<planner>/)")
        found.extend(_read_run(r) for r in runs)
    seen = {}
    for r in found:
        key = (r.planner, r.seed)
        if key in seen and seen[key].path.resolve() != r.path.resolve():
            what = "phase 1" if r.planner is None else f"planner {r.planner}"
            raise ValueError(f"two runs of {what} with seed {r.seed}: {str(seen[key].path)!r} and "
                             f"{str(r.path)!r}; evaluate one protocol per seed")
        seen[key] = r
    order = {p: i for i, p in enumerate(PLANNERS)}
    return sorted(seen.values(), key=lambda r: (r.planner is not None, order.get(r.planner, len(order)),
                                                str(r.planner), r.seed))


def mean_ci(values, level: float = 0.95) -> dict:
    """Mean and confidence interval of a sample (Student t, n - 1 degrees of freedom).

    Args:
        values: floats, one per seed.
        level: the interval's coverage.
    Returns:
        ``{"mean", "ci" (half-width; NaN for n < 2), "n"}``.
    """
    from scipy.special import stdtrit  # Student t quantile (scipy.stats costs a second to import)

    v = np.asarray(values, np.float64)
    n = len(v)
    if n == 0:
        return {"mean": math.nan, "ci": math.nan, "n": 0}
    half = math.nan
    if n > 1:
        half = float(stdtrit(n - 1, 0.5 + level / 2) * v.std(ddof=1) / math.sqrt(n))
    return {"mean": float(v.mean()), "ci": half, "n": n}


def _keys() -> list:
    return [k for _, k, _ in METRICS + EXTRA]


def _summary(per_seed: dict) -> dict:
    """A row over seeds: ``{"seeds": {seed: {...}}, "mean", "ci", "stderr", "n"}``.

    ``stderr`` is the per-episode standard error of the single seed when n = 1.
    """
    seeds = sorted(per_seed)
    mean, ci = {}, {}
    for k in _keys():
        vals = [per_seed[s]["metrics"][k] for s in seeds if k in per_seed[s]["metrics"]]
        if len(vals) == len(seeds) and vals:
            st = mean_ci(vals)
            mean[k], ci[k] = st["mean"], st["ci"]
    stderr = dict(per_seed[seeds[0]]["stderr"]) if len(seeds) == 1 else {}
    return {"seeds": {str(s): per_seed[s] for s in seeds}, "n": len(seeds), "mean": mean, "ci": ci,
            "stderr": stderr}


def _difference(a: dict, b: dict) -> dict:
    """``a - b`` per metric, paired by seed: per-seed differences, mean, interval, % of b."""
    seeds = sorted(set(a["seeds"]) & set(b["seeds"]), key=int)
    out = {"seeds": seeds, "n": len(seeds), "mean": {}, "ci": {}, "stderr": {}, "percent": {}}
    for k in _keys():
        if not all(k in a["seeds"][s]["metrics"] and k in b["seeds"][s]["metrics"] for s in seeds) or not seeds:
            continue
        d = [a["seeds"][s]["metrics"][k] - b["seeds"][s]["metrics"][k] for s in seeds]
        st = mean_ci(d)
        out["mean"][k], out["ci"][k] = st["mean"], st["ci"]
        base = float(np.mean([b["seeds"][s]["metrics"][k] for s in seeds]))
        out["percent"][k] = 100.0 * st["mean"] / abs(base) if base != 0 else math.nan
        if len(seeds) == 1:
            s = seeds[0]
            out["stderr"][k] = math.hypot(a["seeds"][s]["stderr"].get(k, math.nan),
                                          b["seeds"][s]["stderr"].get(k, math.nan))
    return out


def _economy(cfg: TrainConfig) -> dict:
    tax = tax_component_kwargs(evaluation_env_config(cfg.env)) or {}
    return {"n_agents": int(cfg.env.get("n_agents", 4)), "world_size": list(cfg.env.get("world_size", [25, 25])),
            "episode_length": cfg.episode_length, "period": int(tax.get("period", 100))}


def compare(paths, *, num_envs: int = 32, episodes: int = 1, seed: int = 1000,
            log: Optional[Callable] = None) -> dict:
    """Evaluate the runs under ``paths`` and compare the planners (module docstring).

    Args:
        paths: run or protocol directories (``find_runs``).
        num_envs, episodes: economies and measured episodes per row (per seed).
        seed: the evaluation's PRNG seed, the same for every row.
        log: called with a line of progress text (e.g. ``print``); None: silent.
    Returns:
        A JSON-ready dict: ``runs`` (path, planner, seed), ``evaluation``
        (settings), ``economy`` (ours) and ``paper_economy``, ``agents``
        (phase-1 rows), ``planners`` and ``differences`` (``"learned - <baseline>"``),
        each row ``{"seeds": {seed: {"metrics", "stderr", "episodes", "run"}},
        "n", "mean", "ci", "stderr"}`` keyed by metric key; and ``paper`` (``PAPER_2020``).
    Raises:
        FileNotFoundError, ValueError: as ``find_runs``; ValueError: a learned
            and a baseline run of one seed from different phase-1 checkpoints,
            or runs of one planner (or phase 1) whose configs differ beyond
            the seed (``_SEED_KEYS``). An unfinished run is evaluated at its
            latest checkpoint, and said so (``runs[i]["update"]``).
    """
    say = log or (lambda _: None)
    runs = find_runs(paths)
    phase1 = [r for r in runs if r.planner is None]
    planners = {}
    for r in runs:
        if r.planner is not None:
            planners.setdefault(r.planner, []).append(r)
    seeds = sorted({r.seed for r in runs})
    say(f"evaluating {len(runs)} run(s): seeds {', '.join(map(str, seeds))}; "
        f"{'phase 1, ' if phase1 else ''}planners {', '.join(planners) or 'none'}; "
        f"{num_envs} economies x {episodes} episode(s) per row, evaluation seed {seed}; "
        "full labor cost, final tax limits")
    _check_pairing(planners)
    _check_one_config(phase1, planners)
    for r in runs:
        if not r.finished:
            say(f"note: {r.path} is unfinished: evaluated at its checkpoint of update {r.update} of "
                f"{r.cfg.num_updates}")
    t0 = time.perf_counter()
    result = {
        "runs": [{"path": str(r.path), "planner": r.planner, "seed": r.seed, "phase1": r.phase1,
                  "update": r.update, "updates": r.cfg.num_updates} for r in runs],
        "evaluation": {"num_envs": num_envs, "episodes": episodes, "seed": seed},
        "economy": _economy(runs[0].cfg), "paper_economy": PAPER_ECONOMY,
        "agents": _agent_rows(phase1, AGENT_ROWS, num_envs, episodes, seed, say, "phase 1"),
        "agents_phase2": _agent_rows(planners.get("learned", []), PHASE2_AGENT_ROWS, num_envs, episodes, seed,
                                     say, "phase 2 (learned planner)"),
        "planners": {}, "differences": {}, "paper": PAPER_2020,
    }
    for planner, group in planners.items():
        per_seed = {}
        for r in group:
            runner, env_cfg, saez = run_economy(r, num_envs)
            per_seed[r.seed] = _row(runner, r, env_cfg, runner.ppo.role_modes(), seed, episodes, 0, say,
                                    f"planner {planner}", f"planner {planner}, seed {r.seed}", saez=saez)
        result["planners"][planner] = _summary(per_seed)
    if "learned" in result["planners"]:
        for base, row in result["planners"].items():
            if base != "learned":
                result["differences"][f"learned - {base}"] = _difference(result["planners"]["learned"], row)
    result["evaluation"]["wall_s"] = time.perf_counter() - t0
    return result


def run_economy(run: RunInfo, num_envs: int) -> tuple:
    """``(runner, env_cfg, saez)``: what evaluates ``run`` as ``compare`` does: the
    ``EpisodeRunner`` of its evaluation economy (``evaluation_env_config`` of its
    config; pass it ``row_env_params(runner, env_cfg)``), and for a saez run the
    income buffer its economies ended with (``SaezState`` arrays with a leading
    economy axis, read from its checkpoint; None for the other planners).

    Raises:
        FileNotFoundError: no checkpoint; ConfigError: a checkpoint without the
            saez buffer (``checkpoint.restore_subtree``).
    """
    env_cfg = evaluation_env_config(run.cfg.env)
    runner = episode_runner(run.cfg, env_cfg, num_envs)
    # the saez planner continues its run's income buffer
    saez = ckpt.restore_subtree(run.path, runner.saez_template(), SAEZ_MARKER) if run.planner == "saez" else None
    return runner, env_cfg, saez


#: What may differ between the seeds of one planner's runs: ``checkpoint.SEED_KEYS``
#: and how often they save.
_SEED_KEYS = ckpt.SEED_KEYS + ("general.ckpt_frequency_steps",)


def _check_one_config(phase1: list, planners: dict) -> None:
    """Refuse to pool runs of other configs (or run lengths) into one row over seeds."""
    for name, group in [("phase 1", phase1)] + [(f"planner {p}", g) for p, g in planners.items()]:
        for r in group[1:]:
            diff = ckpt.config_differences(group[0].cfg.to_dict(), r.cfg.to_dict(), ignore=_SEED_KEYS)
            if diff:
                raise ValueError(
                    f"the {name} runs of seeds {group[0].seed} and {r.seed} ({group[0].path}, {r.path}) differ in "
                    f"{', '.join(diff[:8])}: a row over seeds pools runs of one config and length; evaluate "
                    "them apart")


def _check_pairing(planners: dict) -> None:
    learned = {r.seed: r for r in planners.get("learned", [])}
    for name, group in planners.items():
        for r in group:
            mate = learned.get(r.seed)
            if name != "learned" and mate is not None and mate.phase1 != r.phase1:
                raise ValueError(
                    f"the learned and {name} runs of seed {r.seed} start from different phase-1 "
                    f"checkpoints ({mate.phase1!r} and {r.phase1!r}); the differences are paired by seed "
                    "and need the same phase 1")


def _row(runner, run: RunInfo, env_cfg: dict, modes: dict, seed: int, episodes: int, warmup: int, say,
         economy: str, label: str, saez=None) -> dict:
    t = time.perf_counter()
    params = restore_policies(run.path, runner)
    samples = runner.run(params, modes, seed=seed, episodes=episodes, warmup=warmup, log=say, economy=economy,
                         saez=saez, env_params=row_env_params(runner, env_cfg))
    means, errs = summarize_samples(samples)
    say(f"  {label}: {brief(means)}{f' (after {warmup} warm-up episodes)' if warmup else ''} "
        f"({time.perf_counter() - t:.1f} s)")
    return {"metrics": means, "stderr": errs, "episodes": len(next(iter(samples.values()))), "run": str(run.path)}


def _agent_rows(runs: list, spec: tuple, num_envs: int, episodes: int, seed: int, say, phase: str) -> dict:
    """The agents of ``runs`` in each mode of ``spec`` (``AGENT_ROWS``): per seed where the
    row depends on the training, once per economy otherwise."""
    rows = {}
    done_baselines = set()
    for r in runs:
        env_cfg = evaluation_env_config(r.cfg.env)
        runner = episode_runner(r.cfg, env_cfg, num_envs)
        economy = (id(runner), json.dumps(env_cfg, sort_keys=True, default=str))
        for label, mode, per_seed in spec:
            if not per_seed:
                if (economy, label) in done_baselines:
                    continue
                done_baselines.add((economy, label))
            row = _row(runner, r, env_cfg, runner.ppo.role_modes(agents=mode), seed, episodes, 0, say, phase,
                       f"{phase}, {label}" + (f", seed {r.seed}" if per_seed else ""))
            rows.setdefault(label, {})[r.seed] = row
    return {label: _summary(per_seed) for label, per_seed in rows.items()}


# ---------------------------------------------------------------- formatting
def _cell(row: dict, key: str, unit: str, digits: int = 4) -> str:
    """``mean ± 95% CI`` (n > 1) or ``mean ± s.e.`` (one seed); '-' when absent."""
    if key not in row["mean"]:
        return "-"
    scale = 100.0 if unit == "%" else 1.0
    m = shown(row["mean"][key]) * scale
    e = row["ci"].get(key, math.nan) if row["n"] > 1 else row["stderr"].get(key, math.nan)
    e *= scale
    if unit == "%":  # percentages: one decimal
        return f"{m:.1f} ± {e:.1f}" if math.isfinite(e) else f"{m:.1f}"
    text = f"{m:.{digits}g}"
    return f"{text} ± {e:.2g}" if math.isfinite(e) else text


def _spread(n: int) -> str:
    """How the tables' ``±`` reads for rows over ``n`` seeds."""
    if n > 1:
        return (f"Mean over {n} training seeds ± the 95% confidence interval (Student t, {n - 1} degrees "
                "of freedom); each seed's value is the mean over its evaluation episodes")
    return "One training seed, the mean over its evaluation episodes ± the standard error over those episodes"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:]


def _seeds(rows: dict) -> int:
    return max([row["n"] for row in rows.values()] + [0])


def format_text(result: dict) -> str:
    """The comparison as plain-text tables for the terminal."""
    ev = result["evaluation"]
    n = _seeds(result["planners"]) or _seeds(result["agents"])
    lines = [f"{_spread(n)} ({ev['num_envs']} economies x {ev['episodes']} episode(s) per seed)."]
    cols = list(METRICS)
    if result["planners"]:
        head = ["planner"] + [f"{n} ({u})" for n, _, u in cols]
        body = [[PLANNER_LABELS.get(p, p)] + [_cell(row, k, u) for _, k, u in cols]
                for p, row in result["planners"].items()]
        lines += ["", _table(head, body)]
    if result["differences"]:
        head = ["learned minus"] + [f"{n} ({'points' if u == '%' else u})" for n, _, u in cols]
        body = []
        for name, row in result["differences"].items():
            base = name.split(" - ", 1)[1]
            body.append([PLANNER_LABELS.get(base, base)]
                        + [_signed(row, k, u) + ("" if u == "%" else f" ({_percent(row, k)}%)")
                           for _, k, u in cols])
        lines += ["", "paired by seed:", _table(head, body)]
    for key, title in (("agents", "phase 1 agents"), ("agents_phase2", "phase 2 agents (learned planner)")):
        if result.get(key):
            acols = [EXTRA[0]] + list(METRICS[1:3])
            head = [title] + [f"{n} ({u})" for n, _, u in acols]
            body = [[label] + [_cell(row, k, u) for _, k, u in acols] for label, row in result[key].items()]
            lines += ["", _table(head, body)]
    return "\n".join(lines)


def _signed(row: dict, key: str, unit: str) -> str:
    if key not in row["mean"]:
        return "-"
    scale = 100.0 if unit == "%" else 1.0
    e = row["ci"].get(key, math.nan) if row["n"] > 1 else row["stderr"].get(key, math.nan)
    m, e = row["mean"][key] * scale, e * scale
    if unit == "%":  # percentage points: one decimal
        return f"{m:+.1f} ± {e:.1f}" if math.isfinite(e) else f"{m:+.1f}"
    return f"{m:+.3g} ± {e:.2g}" if math.isfinite(e) else f"{m:+.3g}"


def _percent(row: dict, key: str) -> str:
    v = row["percent"].get(key, math.nan)
    return f"{v:+.0f}" if math.isfinite(v) else "-"


def _table(head: list, body: list) -> str:
    widths = [max(len(h), *(len(b[i]) for b in body)) for i, h in enumerate(head)]
    fmt = lambda row: "  ".join(c.ljust(w) if i == 0 else c.rjust(w)  # noqa: E731
                                for i, (c, w) in enumerate(zip(row, widths)))
    return "\n".join([fmt(head)] + [fmt(b) for b in body])


def _scales(result: dict) -> str:
    ours, paper = result["economy"], result["paper_economy"]

    def text(e):
        return (f"{e['n_agents']} agents on a {e['world_size'][0]}x{e['world_size'][1]} map, "
                f"{e['episode_length']}-step episodes with {e['period']}-step tax periods "
                f"({e['episode_length'] // max(1, e['period'])} per episode)")

    return (f"Scales differ: our economy has {text(ours)}; the paper's has {text(paper)}, and its agents "
            f"trained far longer. Coin accumulates over an episode, so absolute productivity and "
            f"equality x productivity are not comparable between the two: compare the ratios (the "
            f"'/ free market' columns, and the differences in %).")


def format_markdown(result: dict) -> str:
    """The comparison in the paper's layout (its 2020 figures beside ours), Markdown."""
    ev = result["evaluation"]
    n = _seeds(result["planners"]) or _seeds(result["agents"])
    out = ["# Planner comparison", "",
           f"{_spread(n)} ({ev['num_envs']} economies x "
           f"{ev['episodes']} episode(s) per seed, evaluation seed {ev['seed']}, full labor cost and the "
           "final tax limits). Each planner is evaluated with the agents trained under it, all from the "
           "same phase-1 checkpoint per seed. Paper: Zheng et al. 2020, the figure "
           "`tutorials/assets/prod_eq_welfare.svg` of salesforce/ai-economist.", "",
           _scales(result), ""]
    planners = result["planners"]
    if planners:
        fm = planners.get("free-market")
        head = ("| planner | equality x productivity (coin) | paper | productivity (coin) | paper | "
                "equality (%) | paper | inverse-income-weighted utility | eq x prod / free market | paper |")
        out += [head, "|" + "---|" * 10]
        order = [p for p in PAPER_ORDER if p in planners] + [p for p in planners if p not in PAPER_ORDER]
        k_ep = METRICS[0][1]
        for p in order:
            row, paper = planners[p], PAPER_2020.get(p, {})
            ratio = (f"{row['mean'][k_ep] / fm['mean'][k_ep]:.2f}"
                     if fm is not None and fm["mean"].get(k_ep) not in (None, 0.0) else "-")
            paper_ratio = (f"{paper['equality x productivity'] / PAPER_2020['free-market']['equality x productivity']:.2f}"
                           if paper else "-")
            cells = [PLANNER_LABELS.get(p, p),
                     _cell(row, METRICS[0][1], "coin"), _paper(paper, "equality x productivity", "{:.0f}"),
                     _cell(row, METRICS[1][1], "coin"), _paper(paper, "productivity", "{:.0f}"),
                     _cell(row, METRICS[2][1], "%"), _paper(paper, "equality", "{:.0%}"),
                     _cell(row, METRICS[3][1], "utility"), ratio, paper_ratio]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if result["differences"]:
        out += ["## The learned planner minus each baseline, paired by seed", "",
                "| baseline | Δ equality x productivity (coin) | Δ (%) | paper Δ (%) | Δ productivity (coin) | "
                "Δ equality (points) | Δ inverse-income-weighted utility |", "|" + "---|" * 7]
        for name, row in result["differences"].items():
            base = name.split(" - ", 1)[1]
            k_ep = METRICS[0][1]
            paper = PAPER_2020.get(base)
            paper_pct = (f"{100 * (PAPER_2020['learned']['equality x productivity'] / paper['equality x productivity'] - 1):+.0f}"
                         if paper else "-")
            cells = [PLANNER_LABELS.get(base, base), _signed(row, k_ep, "coin"),
                     _percent(row, k_ep), paper_pct,
                     _signed(row, METRICS[1][1], "coin"), _signed(row, METRICS[2][1], "%"),
                     _signed(row, METRICS[3][1], "utility")]
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    for key, title in (("agents", "Phase 1: the agents against random actions and NO-OP"),
                       ("agents_phase2", "Phase 2: the learned planner's agents, sampled and greedy, against NO-OP")):
        if not result.get(key):
            continue
        out += [f"## {title}", "",
                "Trained rows: " + _lower_first(_spread(_seeds(result[key])).split(";")[0])
                + ". Rows that do not depend on the training seed (random, no-op): ± the standard error "
                "over episodes.",
                "", "| policy | agents' return (per agent) | productivity (coin) | equality (%) |", "|---|---|---|---|"]
        for label, row in result[key].items():
            out.append(f"| {label} | {_cell(row, EXTRA[0][1], 'utility')} | {_cell(row, METRICS[1][1], 'coin')} "
                       f"| {_cell(row, METRICS[2][1], '%', 3)} |")
        out.append("")
    return "\n".join(out)


def _paper(paper: dict, key: str, fmt: str) -> str:
    return fmt.format(paper[key]) if key in paper else "-"


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return float(x) if math.isfinite(x) else None
    if isinstance(x, np.integer):
        return int(x)
    return x


def write_outputs(result: dict, out_dir) -> dict:
    """Write ``evaluation.json`` (NaN as null) and ``evaluation.md`` into ``out_dir``; returns their paths."""
    out = pathlib.Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"json": out / "evaluation.json", "markdown": out / "evaluation.md"}
    paths["json"].write_text(json.dumps(_jsonable(result), indent=1))
    paths["markdown"].write_text(format_markdown(result))
    return paths
