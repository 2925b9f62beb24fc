"""``jaxecon reproduce``: the whole protocol for a config and a list of seeds, resumable.

    jaxecon reproduce --config default --seeds 0 1 2 --out runs/protocol
    jaxecon reproduce --seeds 0 1 --out /tmp/p --phase1-episodes 3000 --phase2-episodes 3000

Per seed: phase 1 (``seed<k>/phase1``), then phase 2 once per planner
(``seed<k>/phase2-<planner>``: learned, saez, us-federal, free-market), all
from that seed's phase-1 checkpoint; then the evaluation over the seeds
(``evaluation.json``, ``evaluation.md``) and the learning curves over seeds
(``learning_curves.png``) in ``--out`` (``jaxecon.training.reproduce``).
Each phase's seeds train side by side as one program (the update vmapped
over seeds: one compilation; ``--seeds-per-program`` caps how many).
Running the same command again skips finished runs and resumes a partly done
one from its latest checkpoint; what it does with each run is printed. The
exit status is 0 when every run is finished and evaluated, 3 when runs are
left for a later call (``--max-updates``), 130 after Ctrl-C (the running
update finishes and every run of it writes its checkpoint first).
"""

from __future__ import annotations

import sys

from jaxecon.cli.options import DEVICE_KINDS, PLANNERS, nonnegative_int, positive_int, select_device

__all__ = ["add_arguments", "cmd_reproduce"]


def add_arguments(p) -> None:
    """``jaxecon reproduce``'s options."""
    p.add_argument("--config", default="default",
                   help="a gather-trade-build training config: a YAML file or a built-in name (default, phase1, phase2)")
    p.add_argument("--seeds", type=nonnegative_int, nargs="+", default=[0, 1, 2], help="training seeds (0 1 2)")
    p.add_argument("--out", required=True, help="the protocol's directory (seed<k>/ per seed, the evaluation)")
    p.add_argument("--planners", nargs="+", choices=PLANNERS, default=list(PLANNERS),
                   help="phase 2's planners (all four)")
    p.add_argument("--phase1-episodes", type=positive_int, default=None,
                   help="override general.episodes in phase 1 (shorter runs)")
    p.add_argument("--phase2-episodes", type=positive_int, default=None,
                   help="override general.episodes in phase 2")
    p.add_argument("--eval-envs", type=positive_int, default=32, help="evaluation economies per row (32)")
    p.add_argument("--eval-episodes", type=positive_int, default=1, help="measured episodes per economy (1)")
    p.add_argument("--eval-seed", type=int, default=1000, help="evaluation seed (1000)")
    p.add_argument("--max-updates", type=positive_int, default=None,
                   help="stop each run after this many updates in this call (continue later with the same "
                        "command)")
    p.add_argument("--seeds-per-program", type=positive_int, default=None,
                   help="train at most this many seeds as one program (default: every seed; 1: one by one, "
                        "as much memory as one seed)")
    p.add_argument("--device", choices=DEVICE_KINDS, default=None, help="JAX device (default: JAX's)")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")


def cmd_reproduce(args, parser) -> int:
    """Run ``jaxecon reproduce``; bad options, configs or directories exit through ``parser.error``."""
    import contextlib

    import jax

    from jaxecon.cli.output import make_out_dir
    from jaxecon.training.config import ConfigError, load_train_config
    from jaxecon.training.reproduce import reproduce

    try:
        device = select_device(args.device)
    except ValueError as exc:
        parser.error(f"--device {args.device}: {exc}")
    ctx = jax.default_device(device) if device is not None else contextlib.nullcontext()
    try:
        cfg = load_train_config(args.config)
        make_out_dir(args.out)  # before any work: a file in the way is refused at once
        with ctx:
            res = reproduce(cfg, args.seeds, args.out, planners=tuple(args.planners),
                            phase1_episodes=args.phase1_episodes, phase2_episodes=args.phase2_episodes,
                            num_envs=args.eval_envs, episodes=args.eval_episodes, eval_seed=args.eval_seed,
                            max_updates=args.max_updates, seeds_per_program=args.seeds_per_program,
                            progress=not args.no_progress,
                            log=lambda s: print(s, flush=True))
    except (ConfigError, FileNotFoundError, ValueError) as exc:
        parser.error(str(exc))
    except KeyboardInterrupt as exc:  # trainer.TrainingInterrupted says where it stopped
        print(f"jaxecon reproduce: {exc or 'interrupted'}; run the same command again to continue",
              file=sys.stderr)
        return 130
    return 0 if res["finished"] else 3
