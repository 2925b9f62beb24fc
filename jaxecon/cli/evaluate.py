"""``jaxecon evaluate RUN [RUN ...]``: one run's policies against baselines, or the planners over seeds.

    jaxecon evaluate runs/default/phase1                 # one run: trained vs random and no-op
    jaxecon evaluate runs/default/phase2-learned --num-envs 64 --episodes 2 --json eval.json
    jaxecon evaluate runs/protocol                       # a protocol: the planners over its seeds
    jaxecon evaluate runs/p/seed0 runs/p/seed1 runs/p/seed2 --out runs/p

One training run directory (``jaxecon train``'s output) prints one row per
policy (``jaxecon.training.evaluate``): the trained agents sampled and greedy,
random and NO-OP agents, and (for a run that trained the planner, or with
``--schedules``) the trained agents under the learned planner and the
free-market, US-federal and Saez schedules; columns are means +- standard
errors over the episodes.

Protocol directories (one seed each, holding ``phase1/`` and
``phase2-<planner>/`` as ``jaxecon reproduce`` writes them, or directories of
those) compare the planners over the training seeds
(``jaxecon.training.comparison``): per planner the mean and 95% confidence
interval over seeds of productivity, equality, equality x productivity and
the inverse-income-weighted utility, each evaluated with the agents trained
under that planner; the learned planner minus each baseline, paired by seed;
phase 1's agents against random and NO-OP. It writes ``evaluation.json``,
``evaluation.md`` (the paper's layout, its 2020 figures beside ours) and
``learning_curves.png`` (the curriculum over seeds,
``jaxecon.training.plots``) to ``--out`` (default: the directory the RUNs
share). Progress (which economy compiles, each row) is printed as it goes.

Runs of the one-step economy (``jaxecon train --config one_step``) are scored
as ``jaxecon.training.one_step`` does: the planner's greedy rates against the
gradient optimum, the grid search, Saez, US federal and the free market,
every schedule with the agents' exact best responses; over several runs the
learned share of the best schedule known, the share of the no-tax gap it
closes and the margins over Saez and US federal, with 95% confidence
intervals.
"""

from __future__ import annotations

import os
import pathlib

from jaxecon.cli.options import positive_int

__all__ = ["add_arguments", "cmd_evaluate"]


def add_arguments(p) -> None:
    """``jaxecon evaluate``'s options."""
    p.add_argument("runs", nargs="+", metavar="RUN",
                   help="a run directory of jaxecon train (or its checkpoints/), or protocol directories "
                        "(one seed each, with phase1/ and phase2-<planner>/), or directories of those")
    p.add_argument("--num-envs", type=positive_int, default=32, help="economies per row (32)")
    p.add_argument("--episodes", type=positive_int, default=1, help="measured episodes per economy (1)")
    p.add_argument("--seed", type=int, default=1000, help="evaluation seed (1000)")
    sched = p.add_mutually_exclusive_group()
    sched.add_argument("--schedules", dest="schedules", action="store_true", default=None,
                       help="one run: add the fixed tax schedules with its agents "
                            "(default: if the run trained the planner)")
    sched.add_argument("--no-schedules", dest="schedules", action="store_false")
    p.add_argument("--json", default=None, help="also write the result to this JSON file")
    p.add_argument("--out", default=None,
                   help="protocols: where evaluation.json, evaluation.md and learning_curves.png go "
                        "(default: the directory the RUNs share)")


def cmd_evaluate(args, parser) -> int:
    """Run ``jaxecon evaluate``; a missing checkpoint or run exits through ``parser.error``."""
    from jaxecon.cli.output import check_json_file, make_out_dir
    from jaxecon.training.comparison import find_runs, is_run_dir
    from jaxecon.training.curriculum import is_one_step

    try:
        if args.json is not None:
            check_json_file(args.json)
        runs = find_runs(args.runs)
    except (FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))
    one_step = [r for r in runs if is_one_step(r.cfg.env)]
    if one_step and len(one_step) < len(runs):
        parser.error(f"one-step runs ({', '.join(str(r.path) for r in one_step)}) are scored against the "
                     "analysis' schedules, other runs against the other planners' runs: evaluate them apart")
    if one_step:
        used = [flag for flag, dest in (("--num-envs", "num_envs"), ("--episodes", "episodes"), ("--seed", "seed"),
                                        ("--out", "out"))
                if getattr(args, dest) != parser.get_default(dest)]
        used += ["--schedules/--no-schedules"] if args.schedules is not None else []
        if used:
            parser.error(f"{', '.join(used)} {'does' if len(used) == 1 else 'do'} not apply to one-step runs: "
                         "each schedule is scored once "
                         "with the agents' exact best responses (--json does apply)")
        return _one_step(args, parser, [r.path for r in runs])

    first = pathlib.Path(args.runs[0])
    single = len(args.runs) == 1 and (is_run_dir(first) or (first.name == "checkpoints" and is_run_dir(first.parent)))
    if single:
        return _single(args, parser)
    if args.schedules is not None:
        parser.error("--schedules/--no-schedules apply to a single training run; a protocol evaluates "
                     "each planner with the agents trained under it")
    if args.out is not None:
        try:
            make_out_dir(args.out)
        except ValueError as exc:
            parser.error(str(exc))
    return _protocol(args, parser)


def _one_step(args, parser, runs) -> int:
    from jaxecon.cli.output import write_json
    from jaxecon.training.one_step import compare_runs, format_text

    try:
        res = compare_runs(runs, log=lambda s: print(s, flush=True))
    except (FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))
    print(format_text(res))
    if args.json:
        write_json(args.json, res)
    return 0


def _single(args, parser) -> int:
    from jaxecon.checkpoint_files import CheckpointError
    from jaxecon.cli.output import write_json
    from jaxecon.training.config import ConfigError
    from jaxecon.training.evaluate import evaluate, format_table

    run = args.runs[0]
    print(f"{run}: {args.num_envs} economies x {args.episodes} episode(s) per row, seed {args.seed}; "
          "full labor cost, final tax limits", flush=True)
    try:
        res = evaluate(run, num_envs=args.num_envs, episodes=args.episodes, seed=args.seed,
                       schedules=args.schedules, log=lambda s: print(s, flush=True))
    except (ConfigError, CheckpointError, FileNotFoundError) as exc:
        parser.error(str(exc))
    from jaxecon.training.curriculum import run_label

    print(f"{run_label(res['config'])}, checkpoint step {res['step']}: mean +- standard error over episodes")
    print(format_table(res["rows"]))
    if args.json:
        write_json(args.json, {"checkpoint": str(run), "step": res["step"], "seed": args.seed, "rows": res["rows"]})
    return 0


def _protocol(args, parser) -> int:
    from jaxecon.cli.output import write_json
    from jaxecon.training.comparison import compare, format_text, write_outputs
    from jaxecon.training.config import ConfigError
    from jaxecon.training.plots import plot_protocol

    out = pathlib.Path(args.out) if args.out else pathlib.Path(os.path.commonpath(
        [os.path.abspath(r) for r in args.runs]))
    try:
        res = compare(args.runs, num_envs=args.num_envs, episodes=args.episodes, seed=args.seed,
                      log=lambda s: print(s, flush=True))
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))
    print(format_text(res))
    paths = write_outputs(res, out)
    print("drawing the learning curves over seeds ...", flush=True)
    paths["curves"] = plot_protocol(args.runs, out / "learning_curves.png", res)
    if args.json:
        write_json(args.json, res)
        paths["json (--json)"] = args.json
    print("wrote " + ", ".join(str(p) for p in paths.values()))
    return 0
