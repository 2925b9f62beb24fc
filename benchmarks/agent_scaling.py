"""Compile time, speed and memory of ONE economy against its number of agents.

    python benchmarks/agent_scaling.py [--one-step 10,100,1000,10000]
                                       [--gtb 4,100,1000] [--steps 200]
                                       [--reference-steps 5] [--no-reference]
                                       [--observed-incomes K] [--json FILE]

The table of ``jaxecon bench --agents`` (what is measured:
``jaxecon.bench.agents``), with the persistent compilation cache off and an
empty list allowed (``--gtb ""``: the one-step economy only).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))

from jaxecon.bench.agents import (  # noqa: E402
    DEFAULT_GTB_AGENTS,
    DEFAULT_ONE_STEP_AGENTS,
    format_agents_table,
    run_agents,
)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ints = lambda s: [int(x) for x in s.split(",") if x]  # noqa: E731
    ap.add_argument("--one-step", type=ints, default=list(DEFAULT_ONE_STEP_AGENTS))
    ap.add_argument("--gtb", type=ints, default=list(DEFAULT_GTB_AGENTS))
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--reference-steps", type=int, default=5)
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--observed-incomes", type=int, default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = run_agents(args.one_step, args.gtb, args.steps, 0 if args.no_reference else args.reference_steps,
                      args.observed_incomes)
    print(format_agents_table(rows))
    out = pathlib.Path(args.json or f"runs/agent-scaling-{datetime.datetime.now():%Y%m%d-%H%M%S}.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"rows": rows, "cpu_count": os.cpu_count()}, indent=1, default=str))
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
