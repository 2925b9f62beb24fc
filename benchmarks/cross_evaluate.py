"""Each planner's agents under each planner: is a planner's outcome its schedule or its agents?

In the protocol (``benchmarks/taxed_phase1.py``, ``jaxecon evaluate``) each
planner is evaluated with the agents trained under it. This script also
swaps them: per training seed, the agents of the learned planner's phase-2
run and those of the saez run, each under the learned planner (sampling its
rates, as in training) and under the Saez formula (continuing the income
buffer of the saez run's economies), 4 rows per seed. The same evaluation as
``comparison.compare`` (``--num-envs`` economies x one 200-step episode at the
full labor cost and the final tax limits, evaluation seed 1000), so the two
diagonal rows equal ``jaxecon evaluate``'s figures to the last digit.

If the learned planner's agents produced little under every schedule, the
planner would be held back by agents that learned less; if the saez agents
produced as much under the learned planner's rates as under Saez, the
schedule would be the better one with the wrong agents. docs/training.md
("Each planner's agents under the other planner") gives the 8-seed figures.

    python benchmarks/cross_evaluate.py ../runs/gtb8 --json ../runs/gtb8_cross.json

Prints a line per seed and row (equality x productivity, productivity,
equality, tax revenue per episode), then the mean over seeds with the 95%
interval (Student t), and the paired differences that matter.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

METRICS = (("equality x productivity", "episode/social_welfare/coin_eq_times_productivity"),
           ("productivity", "episode/social/productivity"),
           ("equality", "episode/social/equality"),
           ("tax revenue", "episode/PeriodicTax/total_collected_taxes"))

#: (row label, whose agents, which planner)
ROWS = (("learned agents, learned planner", "learned", "learned"),
        ("saez agents, learned planner", "saez", "learned"),
        ("learned agents, Saez", "learned", "saez"),
        ("saez agents, Saez", "saez", "saez"))


def cross_rows(protocol_dirs, num_envs: int, seed: int, log=print) -> dict:
    """``{train seed: {row label: {metric name: mean over the episodes}}}`` for each seed
    that has both a learned and a saez phase-2 run under ``protocol_dirs``
    (the agents' group ``"a"`` swapped between the runs; ``METRICS``: coin,
    coin, equality as a fraction 0..1, coin per episode).

    Raises:
        FileNotFoundError, ValueError: as ``comparison.find_runs``; ValueError:
            no seed with both runs (``main`` prints either and exits with 1).
    """
    from jaxecon.training.comparison import find_runs, run_economy
    from jaxecon.training.evaluate import restore_policies, row_env_params, summarize_samples

    runs = {(r.planner, r.seed): r for r in find_runs(protocol_dirs)}
    seeds = sorted(s for p, s in runs if p == "learned" and ("saez", s) in runs)
    if not seeds:
        raise ValueError(f"{[str(d) for d in protocol_dirs]} hold no seed with both a phase2-learned and a "
                         "phase2-saez run (benchmarks/taxed_phase1.py makes them)")
    out = {}
    for s in seeds:
        econ, params = {}, {}
        for planner in ("learned", "saez"):
            run = runs[(planner, s)]
            econ[planner] = run_economy(run, num_envs)
            params[planner] = restore_policies(run.path, econ[planner][0])
        out[s] = {}
        for label, agents, planner in ROWS:
            runner, env_cfg, saez = econ[planner]
            p = {**params[planner], "a": params[agents]["a"]}
            t = time.perf_counter()
            samples = runner.run(p, runner.ppo.role_modes(), seed=seed, episodes=1, saez=saez, log=log,
                                 economy=f"the {planner} planner's economy",
                                 env_params=row_env_params(runner, env_cfg))
            means, _ = summarize_samples(samples)
            out[s][label] = {name: means[key] for name, key in METRICS}
            log(f"  seed {s}, {label}: " + ", ".join(f"{n} {v:.4g}" for n, v in out[s][label].items())
                + f" ({time.perf_counter() - t:.1f} s)")
    return out


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    p.add_argument("protocols", nargs="+", help="protocol directories (seed<k>/ with phase2-learned "
                                                "and phase2-saez), or a directory of them")
    p.add_argument("--num-envs", type=int, default=32)
    p.add_argument("--seed", type=int, default=1000, help="evaluation seed (1000, as jaxecon evaluate)")
    p.add_argument("--json", default=None, help="also write the per-seed rows here")
    args = p.parse_args(argv)

    from jaxecon.training.comparison import mean_ci

    try:
        rows = cross_rows(args.protocols, args.num_envs, args.seed)
    except (FileNotFoundError, ValueError) as e:
        raise SystemExit(f"cross_evaluate.py: {e}") from None
    seeds = sorted(rows)
    print(f"\nmean over {len(seeds)} training seeds ± 95% interval (Student t)")
    for label, _, _ in ROWS:
        cells = []
        for name, _ in METRICS:
            m = mean_ci([rows[s][label][name] for s in seeds])
            cells.append(f"{name} {m['mean']:.4g} ± {m['ci']:.2g}")
        print(f"{label:32s} " + "; ".join(cells))
    eq = "equality x productivity"
    for a, b in ((ROWS[0][0], ROWS[1][0]), (ROWS[3][0], ROWS[2][0]), (ROWS[0][0], ROWS[3][0])):
        m = mean_ci([rows[s][a][eq] - rows[s][b][eq] for s in seeds])
        print(f"{a} minus {b}: {eq} {m['mean']:+.3g} ± {m['ci']:.2g} (paired)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"evaluation": {"num_envs": args.num_envs, "seed": args.seed},
                       "rows": {str(s): r for s, r in rows.items()}}, f, indent=1)
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
