"""``jaxecon bench`` (and ``python benchmarks/throughput.py``): the benchmark's options and output.

Parses the options, runs ``jaxecon.bench.run_benchmark``, prints the table
(``jaxecon.bench.format_table``) and writes the results as JSON
(``--json``, default ``runs/bench-<timestamp>.json``) with the throughput
plot beside it (same name, ``.png``). What is measured: ``jaxecon.bench``.

The benchmark measures compile times, so it compiles: unlike the other
commands it leaves JAX's persistent compilation cache off unless
``$JAXECON_COMPILATION_CACHE`` is set (``jaxecon.compilation_cache``).

Building the parser loads no JAX: the measurements are imported when the
benchmark runs.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import os
import pathlib
import time

from jaxecon import bench
from jaxecon.bench.agents import DEFAULT_GTB_AGENTS, DEFAULT_ONE_STEP_AGENTS
from jaxecon.bench.defaults import ADAPTER_BATCH_SIZE, DEFAULT_BATCH_SIZES, DEFAULT_MAX_ENV_STEPS, DEFAULT_STEPS
from jaxecon.bench.economies import DEFAULT_ECONOMIES, ECONOMIES
from jaxecon.cli.options import DEVICE_KINDS, nonnegative_int, positive_int, select_device
from jaxecon.cli.output import check_json_file, write_json

__all__ = ["DESCRIPTION", "add_arguments", "main", "run_from_args"]

#: One line on what ``jaxecon bench`` does (its ``--help`` description).
DESCRIPTION = bench.__doc__.strip().splitlines()[0]


def _int_list(text: str) -> list[int]:
    try:
        values = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of positive integers, got {text!r}"
        ) from None
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of positive integers, got {text!r}"
        )
    return values


def _int_list_or_none(text: str) -> list[int]:
    """``_int_list``, or [] for "none" (skip)."""
    if text.strip().lower() == "none":
        return []
    try:
        return _int_list(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"must be 'none' or a comma-separated list of positive integers, got {text!r}"
        ) from None


def _economy_list(text: str) -> list[str]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    bad = [n for n in names if n not in ECONOMIES]
    if not names or bad:
        raise argparse.ArgumentTypeError(
            f"must be a comma-separated list of {list(ECONOMIES)}, got {text!r}"
        )
    return names


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bench`` options to ``parser``."""
    parser.add_argument("--batch-sizes", type=_int_list, default=list(DEFAULT_BATCH_SIZES),
                        metavar="B1,B2,...",
                        help="batch sizes of the scan+vmap rollouts (default "
                             + ",".join(map(str, DEFAULT_BATCH_SIZES)) + ")")
    parser.add_argument("--adapter-batch-sizes", type=_int_list_or_none, default=None,
                        metavar="B1,B2|none",
                        help="batch sizes at which the object adapter (NativeObjectObservationWrapper) "
                             "is timed against the bare env in alternating rounds (default "
                             f"{ADAPTER_BATCH_SIZE} if --batch-sizes has it; none: skip)")
    parser.add_argument("--steps", type=positive_int, default=DEFAULT_STEPS, metavar="N",
                        help=f"steps per rollout (default {DEFAULT_STEPS})")
    parser.add_argument("--max-env-steps", type=nonnegative_int, default=DEFAULT_MAX_ENV_STEPS,
                        metavar="N",
                        help="shorten rollouts of large batches to at most N env-steps "
                             f"(batch x steps; >= 10 steps; default {DEFAULT_MAX_ENV_STEPS}, 0: no cap)")
    parser.add_argument("--loop-steps", type=nonnegative_int, default=None, metavar="N",
                        help="steps of the Python-loop measurement (default: --steps; 0 skips it)")
    parser.add_argument("--shim-steps", type=nonnegative_int, default=None, metavar="N",
                        help="steps of the stateful shim (jaxecon.foundation) stepped from Python, "
                             "timed alternately with the reference (default: --reference-steps; 0 skips it)")
    parser.add_argument("--economies", type=_economy_list, default=None,
                        metavar="E1,E2",
                        help="economies to measure, from " + ",".join(ECONOMIES)
                             + " (default " + ",".join(DEFAULT_ECONOMIES) + ")")
    parser.add_argument("--no-episode-compile", action="store_true",
                        help="skip timing the compile of a full-episode rollout")
    parser.add_argument("--no-reference", action="store_true",
                        help="do not measure the reference (ai-economist)")
    parser.add_argument("--reference-steps", type=positive_int, default=None, metavar="N",
                        help="steps of the reference measurement (default 1000; with --agents 5)")
    parser.add_argument("--obs-dtype", choices=("float32", "bfloat16", "uint8"), default=None,
                        help="observed map dtype of the wood-and-stone economies (their obs_dtype; "
                             "default: the config's, float32); the reference runs the config as is")
    parser.add_argument("--min-time", type=float, default=1.0, metavar="S",
                        help="run each compiled rollout for at least S seconds (default 1)")
    parser.add_argument("--seed", type=nonnegative_int, default=0, metavar="S",
                        help="PRNG seed (default 0)")
    parser.add_argument("--device", choices=DEVICE_KINDS, default=None,
                        help="JAX device kind (default: JAX's default device)")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write the results here (default runs/bench-<timestamp>.json; "
                             "with --agents runs/agent-scaling-<timestamp>.json)")
    parser.add_argument("--quiet", action="store_true",
                        help="print only the final table")
    parser.add_argument("--agents", action="store_true",
                        help="instead of the throughput table, ONE env against its number of agents "
                             "(jaxecon.bench.agents): the one-step economy and gather-trade-build, each "
                             "row's compile s, env-steps/s, agent-steps/s and memory per env, beside "
                             "TaxAI's published speeds and the reference; takes --steps, "
                             "--reference-steps, --no-reference, --device and --json")
    parser.add_argument("--one-step-agents", type=_int_list_or_none, default=None, metavar="N1,N2|none",
                        help="with --agents: the one-step economy's agent counts (default "
                             + ",".join(map(str, DEFAULT_ONE_STEP_AGENTS)) + "; none: skip it)")
    parser.add_argument("--gtb-agents", type=_int_list_or_none, default=None, metavar="N1,N2|none",
                        help="with --agents: gather-trade-build's agent counts (default "
                             + ",".join(map(str, DEFAULT_GTB_AGENTS)) + "; none: skip it)")
    parser.add_argument("--observed-incomes", type=positive_int, default=None, metavar="K",
                        help="with --agents: each agent observes the sorted last incomes at K ranks "
                             "(the tax's jaxecon-only observed_incomes) instead of all n")


#: Options of the throughput table that --agents does not take (dest: flag).
_THROUGHPUT_ONLY = {
    "batch_sizes": "--batch-sizes", "adapter_batch_sizes": "--adapter-batch-sizes",
    "max_env_steps": "--max-env-steps", "loop_steps": "--loop-steps", "shim_steps": "--shim-steps",
    "economies": "--economies", "no_episode_compile": "--no-episode-compile", "obs_dtype": "--obs-dtype",
    "min_time": "--min-time", "seed": "--seed", "quiet": "--quiet",
}
#: Options of --agents alone (dest: flag).
_AGENTS_ONLY = {"one_step_agents": "--one-step-agents", "gtb_agents": "--gtb-agents",
                "observed_incomes": "--observed-incomes"}


def _run_agents(args, parser: argparse.ArgumentParser, device) -> dict:
    """``--agents``: the table of ``jaxecon.bench.agents``; prints it, writes the JSON."""
    import jax

    from jaxecon.bench.agents import format_agents_table, run_agents

    given = [flag for dest, flag in _THROUGHPUT_ONLY.items() if getattr(args, dest) != parser.get_default(dest)]
    if given:
        parser.error(f"--agents measures one env per row; {', '.join(given)} "
                     f"belong{'s' if len(given) == 1 else ''} to the throughput table "
                     "(--agents takes --steps, --reference-steps, --no-reference, --device, --json, "
                     + ", ".join(_AGENTS_ONLY.values()) + ")")
    one_step = list(DEFAULT_ONE_STEP_AGENTS) if args.one_step_agents is None else args.one_step_agents
    gtb = list(DEFAULT_GTB_AGENTS) if args.gtb_agents is None else args.gtb_agents
    if not one_step and not gtb:
        parser.error("--one-step-agents none and --gtb-agents none leave nothing to measure")
    path = pathlib.Path(args.json) if args.json else pathlib.Path(
        "runs", "agent-scaling-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + ".json"
    )
    t0 = time.perf_counter()
    with jax.default_device(device) if device is not None else contextlib.nullcontext():
        rows = run_agents(one_step, gtb, args.steps,
                          0 if args.no_reference else (5 if args.reference_steps is None else args.reference_steps),
                          args.observed_incomes)
    result = {"rows": rows, "cpu_count": os.cpu_count(), "device": str(device or jax.devices()[0]),
              "wall_s": time.perf_counter() - t0}
    print()
    print(format_agents_table(rows))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, result)
    print(f"\nwrote {path} (total {result['wall_s']:.0f} s)")
    return result


def run_from_args(args, parser: argparse.ArgumentParser) -> dict:
    """Run the benchmark for parsed ``args``; print the table; write the JSON. Returns the result."""
    from jaxecon.bench import format_table, plot_throughput, run_benchmark, summary_lines  # JAX: only now
    from jaxecon.compilation_cache import ENV_VAR as COMPILATION_CACHE_VAR, enable_persistent_cache

    try:
        device = select_device(args.device)
    except ValueError as exc:
        parser.error(f"--device {args.device}: {exc}")
    if not args.min_time >= 0:
        parser.error(f"--min-time must be >= 0, got {args.min_time}")
    if args.json is not None:
        try:
            check_json_file(args.json, parents_made=True)
        except ValueError as exc:
            parser.error(str(exc))
    if not args.agents:
        given = [flag for dest, flag in _AGENTS_ONLY.items() if getattr(args, dest) is not None]
        if given:
            parser.error(f"{', '.join(given)} need{'s' if len(given) == 1 else ''} --agents")
    # compile times are measured: no persistent cache unless asked for (also in
    # the shim's child process, which inherits the environment)
    asked = COMPILATION_CACHE_VAR in os.environ
    if asked:
        enable_persistent_cache()
    os.environ.setdefault(COMPILATION_CACHE_VAR, "0")
    if args.agents:
        try:
            return _run_agents(args, parser, device)
        finally:
            if not asked:
                os.environ.pop(COMPILATION_CACHE_VAR, None)
    path = pathlib.Path(args.json) if args.json else pathlib.Path(
        "runs", "bench-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + ".json"
    )
    t0 = time.perf_counter()
    try:
        result = run_benchmark(
            batch_sizes=args.batch_sizes,
            n_steps=args.steps,
            loop_steps=args.loop_steps,
            shim_steps=args.shim_steps,
            max_env_steps=args.max_env_steps,
            economies=args.economies,
            reference=not args.no_reference,
            reference_steps=1000 if args.reference_steps is None else args.reference_steps,
            episode_compile=not args.no_episode_compile,
            adapter_batch_sizes=args.adapter_batch_sizes,
            device=device,
            min_time=args.min_time,
            seed=args.seed,
            quiet=args.quiet,
            obs_dtype=args.obs_dtype,
        )
    finally:
        if not asked:
            os.environ.pop(COMPILATION_CACHE_VAR, None)
    result["wall_s"] = time.perf_counter() - t0
    print()
    print(format_table(result))
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, result)  # NaN -> null
    plot_path = path.with_suffix(".png")
    plot_throughput(result, plot_path)
    print(f"\nwrote {path} and {plot_path} (total {result['wall_s']:.0f} s)")
    for line in summary_lines(result):
        print(line)
    return result


def main(argv=None) -> dict:
    """``python benchmarks/throughput.py [options]``: same options as ``jaxecon bench``."""
    parser = argparse.ArgumentParser(
        prog="throughput.py", description=DESCRIPTION
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_from_args(args, parser)
