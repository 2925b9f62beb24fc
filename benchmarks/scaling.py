"""Throughput against the number of agents, beside the reference: the scaling table.

    python benchmarks/scaling.py [--agents 4,10,25,50,100,200] [--batch 256] [--steps 20]
                                 [--no-reference] [--obs-dtype float32|bfloat16|uint8]
                                 [--parts] [--warm-steps 100] [--json FILE]

For each agent count n: the canonical Gather-Trade-Build economy with n
agents on a uniform map sized to fit (``jaxecon.bench.scaling.scaling_config``),
jaxecon's scan+vmap rollout at ``--batch`` envs and the reference
(ai-economist) in the same process. Prints the Markdown table and writes
the JSON (``--json``, default ``runs/scaling-<timestamp>.json``, beside
``jaxecon bench``'s ``runs/bench-<timestamp>.json``). With ``--parts``, also times the parts of a step whose cost could
grow faster than linearly in n (move resolution in Gather's step, the
double auction's matching in its step, the observation windows, the masks)
at every n with ``benchmarks/profile_step.py``'s timer, reported per
agent-step: a part whose figure grows with n grows faster than linearly.
Timings on a shared CPU are noisy: repeat, and compare within one run.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import statistics
import sys

# Run from a source checkout without installing: the repository root on the path.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

#: The parts timed by --parts (names of profile_step.build_parts).
PARTS = ("step:Gather", "step:ContinuousDoubleAuction", "obs:scenario", "masks", "step")


def time_parts(agent_counts, batch: int, obs_dtype, repeats: int = 5, warm_steps: int = 100) -> dict:
    """``{n: {part: us per agent-step}}`` for ``PARTS`` (median of ``repeats``), each timed
    on the batch after ``warm_steps`` random steps (so that the books hold orders)."""
    import jaxecon
    from jaxecon.bench.scaling import scaling_config

    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    from profile_step import build_parts, time_part, warm_batch

    out = {}
    for n in agent_counts:
        cfg = scaling_config(n)
        if obs_dtype:
            cfg["obs_dtype"] = obs_dtype
        env = jaxecon.make_from_config(cfg)
        params = env.default_params
        args = warm_batch(env, params, batch, warm_steps=warm_steps)
        parts = build_parts(env, params)
        out[n] = {}
        for name in PARTS:
            t = statistics.median(time_part(parts[name], args, repeats))
            out[n][name] = t * 1e6 / (batch * n)
        print(f"[parts] {n:4d} agents: " + ", ".join(f"{k} {v:.3f}" for k, v in out[n].items())
              + " us per agent-step", flush=True)
    return out


def main(argv=None) -> dict:
    from jaxecon.bench.scaling import DEFAULT_AGENT_COUNTS, format_scaling_table, run_scaling

    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--agents", default=",".join(map(str, DEFAULT_AGENT_COUNTS)))
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--max-env-steps", type=int, default=20_000)
    p.add_argument("--reference-steps", type=int, default=400)
    p.add_argument("--no-reference", action="store_true")
    p.add_argument("--obs-dtype", choices=("float32", "bfloat16", "uint8"), default=None)
    p.add_argument("--min-time", type=float, default=1.0)
    p.add_argument("--parts", action="store_true", help="also time the parts of a step per agent-step")
    p.add_argument("--warm-steps", type=int, default=100,
                   help="random steps before the parts are timed (default 100)")
    p.add_argument("--json", default=None,
                   help="write the results here (default runs/scaling-<timestamp>.json)")
    args = p.parse_args(argv)
    counts = [int(x) for x in args.agents.split(",") if x]
    if not counts or min(counts) < 2 or args.batch < 1 or args.warm_steps < 0:
        p.error("--agents must list integers >= 2, --batch must be >= 1 and --warm-steps >= 0")
    res = run_scaling(counts, batch=args.batch, n_steps=args.steps, max_env_steps=args.max_env_steps,
                      reference=not args.no_reference, reference_steps=args.reference_steps,
                      obs_dtype=args.obs_dtype, min_time=args.min_time)
    if args.parts:
        res["parts_us_per_agent_step"] = time_parts(counts, args.batch, args.obs_dtype,
                                                    warm_steps=args.warm_steps)
        res["settings"]["parts_warm_steps"] = args.warm_steps
    print()
    print(format_scaling_table(res))
    if args.parts:
        print()
        print("| agents | " + " | ".join(PARTS) + " |")
        print("|" + "---|" * (len(PARTS) + 1))
        for n, parts in res["parts_us_per_agent_step"].items():
            print(f"| {n} | " + " | ".join(f"{parts[k]:.3f}" for k in PARTS) + " |")
        print("\n(us per agent-step of each part, jitted and vmapped alone; see profile_step.py)")
    path = pathlib.Path(args.json) if args.json else pathlib.Path(
        "runs", "scaling-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + ".json")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(res, indent=2))
    print(f"\nwrote {path}")
    return res


if __name__ == "__main__":
    main()
