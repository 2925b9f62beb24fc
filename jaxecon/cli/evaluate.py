"""``jaxecon evaluate CKPT``: trained policies against random actions, NO-OP and fixed tax schedules.

    jaxecon evaluate runs/default/phase1
    jaxecon evaluate runs/default/phase2 --num-envs 64 --episodes 2 --json eval.json

Prints one row per policy (``jaxecon.training.evaluate``): the trained agents
sampled and greedy, random and NO-OP agents, and (for a run that trained the
planner, or with ``--schedules``) the trained agents under the learned planner
and the free-market, US-federal and Saez schedules; columns are means +-
standard errors over the episodes of the agents' return, productivity,
equality, equality x productivity, tax revenue and the planner's return.
"""

from __future__ import annotations

from jaxecon.cli.options import positive_int

__all__ = ["add_arguments", "cmd_evaluate"]


def add_arguments(p) -> None:
    """``jaxecon evaluate``'s options."""
    p.add_argument("checkpoint", metavar="CKPT", help="a run directory of jaxecon train (or its checkpoints/)")
    p.add_argument("--num-envs", type=positive_int, default=32, help="economies per row (32)")
    p.add_argument("--episodes", type=positive_int, default=1, help="measured episodes per economy (1)")
    p.add_argument("--seed", type=int, default=1000, help="evaluation seed (1000)")
    sched = p.add_mutually_exclusive_group()
    sched.add_argument("--schedules", dest="schedules", action="store_true", default=None,
                       help="add the fixed tax schedules (default: if the run trained the planner)")
    sched.add_argument("--no-schedules", dest="schedules", action="store_false")
    p.add_argument("--json", default=None, help="also write the rows to this JSON file")


def cmd_evaluate(args, parser) -> int:
    """Run ``jaxecon evaluate``; a missing checkpoint exits through ``parser.error``."""
    from jaxecon.cli.output import write_json
    from jaxecon.training.config import ConfigError
    from jaxecon.training.evaluate import evaluate, format_table

    try:
        res = evaluate(args.checkpoint, num_envs=args.num_envs, episodes=args.episodes,
                       seed=args.seed, schedules=args.schedules)
    except (ConfigError, FileNotFoundError) as exc:
        parser.error(str(exc))
    cfg = res["config"]
    print(f"{args.checkpoint}: {cfg.general.name}, phase {cfg.phase}, checkpoint step {res['step']}; "
          f"{args.num_envs} economies x {args.episodes} episode(s) per row, seed {args.seed}; "
          "full labor cost, final tax limits")
    print(format_table(res["rows"]))
    if args.json:
        write_json(args.json, {"checkpoint": str(args.checkpoint), "step": res["step"],
                               "seed": args.seed, "rows": res["rows"]})
    return 0
