"""Throughput of jaxecon (env-steps/s, agent-steps/s) beside the reference numpy implementation.

    jaxecon bench [--batch-sizes 1,16,256,1024,4096] [--steps 200] [--no-reference]
                  [--economies default,gather_build] [--device cpu|gpu|tpu] [--json FILE]
    python benchmarks/throughput.py ...          # the same, as a script

What is measured, per economy (``default``: the economy of ``jaxecon run``,
i.e. Foundation's canonical Gather-Trade-Build config with the components
jaxecon implements; ``gather_build``: the same with only Build and Gather;
an economy whose component list equals an earlier one is measured once):

- ``scan+vmap``, for each batch size B: ``jax.jit`` of a ``lax.scan`` over
  ``--steps`` steps (fewer for large B: at most ``--max-env-steps`` env-steps
  per rollout, at least 10 steps; the per-step cost does not depend on the
  rollout length) of ``jax.vmap``-ed (``env.sample_actions`` + ``env.step``)
  -- uniformly random valid actions sampled from the masks inside the scan.
  The rollout starts from a reset batch (reset not timed). The compile
  (``jit(...).lower(...).compile()``) is timed separately; the compiled
  rollout is then run until at least ``--min-time`` seconds have passed (a
  first run shorter than that is a discarded warm-up) and the mean time per
  timed rollout is used: env-steps/s = B x steps / time.
- ``python loop``: one env stepped from Python, one call of the jitted
  ``env.sample_actions`` and one of the jitted ``env.step`` per step (after a
  warm-up call that compiles both, timed separately).
- the reference, ai-economist 1.7.1, measured in the same run with
  ``benchmarks/reference_speed.measure_reference`` on the config with the
  same component list (skipped with a message when ai-economist is not
  installed, when no reference config has the same components, or outside a
  source checkout). ``ratio`` = jaxecon env-steps/s (action sampling
  included) / reference env-steps/s (time inside ``env.step`` only, action
  sampling excluded) -- a ratio that favours the reference.

agent-steps/s = env-steps/s x n_agents (mobile agents), as in
``benchmarks/reference_speed.py``. These are measurements, never unit tests.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import json
import os
import pathlib
import platform
import sys
import time

__all__ = [
    "ECONOMIES",
    "make_rollout",
    "measure_rollout",
    "measure_python_loop",
    "measure_reference",
    "run_benchmark",
    "format_table",
    "add_arguments",
    "run_from_args",
    "main",
]

DEFAULT_BATCH_SIZES = (1, 16, 256, 1024, 4096)
DEFAULT_STEPS = 200
DEFAULT_MAX_ENV_STEPS = 100_000
MIN_ROLLOUT_STEPS = 10


def rollout_steps(batch: int, steps: int, max_env_steps: int | None) -> int:
    """Rollout length for ``batch`` envs: ``steps``, shortened so that one rollout
    has at most ``max_env_steps`` env-steps (never below 10 steps or above ``steps``)."""
    if not max_env_steps:
        return steps
    return max(min(steps, MIN_ROLLOUT_STEPS), min(steps, max_env_steps // batch))


def _economies() -> dict:
    from jaxecon.cli import default_config, gather_build_config

    return {"default": default_config, "gather_build": gather_build_config}


#: Economy names accepted by ``--economies``.
ECONOMIES = ("default", "gather_build")


# --------------------------------------------------------------------------
# jaxecon measurements
# --------------------------------------------------------------------------


def make_rollout(env, n_steps: int):
    """``rollout(obs, state, keys, params) -> (obs, state, keys)``: ``n_steps`` batched steps.

    One ``lax.scan`` over steps of ``vmap(sample_actions + step)``; ``obs``,
    ``state``, ``keys`` carry a leading batch axis. Not jitted.
    """
    import jax

    v_sample = jax.vmap(env.sample_actions)
    v_step = jax.vmap(env.step, in_axes=(0, 0, 0, None))
    v_split = jax.vmap(lambda k: jax.random.split(k, 3))

    def rollout(obs, state, keys, params):
        def body(carry, _):
            obs, state, keys = carry
            k3 = v_split(keys)
            actions = v_sample(k3[:, 1], obs)
            obs, state, _rew, _done, _info = v_step(k3[:, 2], state, actions, params)
            return (obs, state, k3[:, 0]), None

        carry, _ = jax.lax.scan(body, (obs, state, keys), None, length=n_steps)
        return carry

    return rollout


def measure_rollout(env, params, batch: int, n_steps: int, seed: int = 0,
                    min_time: float = 1.0, max_repeats: int = 20) -> dict:
    """Time the jitted, vmapped ``lax.scan`` rollout of ``batch`` envs x ``n_steps`` steps.

    Returns ``{"mode": "scan+vmap", "batch", "n_steps", "compile_s", "run_s"
    (mean seconds per rollout), "repeats", "env_steps_per_s",
    "agent_steps_per_s"}``.
    """
    import jax

    keys = jax.random.split(jax.random.key(seed), 2 * batch)
    obs, state = jax.jit(jax.vmap(env.reset, in_axes=(0, None)))(keys[:batch], params)
    step_keys = keys[batch:]
    jax.block_until_ready(state)
    t0 = time.perf_counter()
    compiled = jax.jit(make_rollout(env, n_steps)).lower(obs, state, step_keys, params).compile()
    compile_s = time.perf_counter() - t0

    def timed_run():
        t0 = time.perf_counter()
        jax.block_until_ready(compiled(obs, state, step_keys, params))
        return time.perf_counter() - t0

    # The first call carries one-off costs (buffer allocation); it only counts
    # when it is long enough (>= min_time) for them not to matter.
    first = timed_run()
    times = [first] if first >= min_time else []
    while not times or (sum(times) < min_time and len(times) < max_repeats):
        times.append(timed_run())
    run_s = sum(times) / len(times)
    sps = batch * n_steps / run_s
    return {
        "mode": "scan+vmap",
        "batch": batch,
        "n_steps": n_steps,
        "compile_s": compile_s,
        "run_s": run_s,
        "repeats": len(times),
        "env_steps_per_s": sps,
        "agent_steps_per_s": sps * env.n_agents,
    }


def measure_python_loop(env, params, n_steps: int, seed: int = 0) -> dict:
    """Time one env stepped from Python: jitted ``sample_actions`` + jitted ``step`` per step.

    Returns ``{"mode": "python loop", "batch": 1, "n_steps", "compile_s",
    "run_s", "env_steps_per_s", "agent_steps_per_s"}``.
    """
    import jax

    step = jax.jit(env.step)
    sample = jax.jit(env.sample_actions)
    key = jax.random.key(seed)
    key, k0 = jax.random.split(key)
    obs, state = jax.jit(env.reset)(k0, params)
    # one key per call, split up front so the timed loop holds only the two calls
    keys = list(jax.random.split(key, 2 * n_steps + 2))
    t0 = time.perf_counter()
    a = sample(keys[-2], obs)
    jax.block_until_ready(step(keys[-1], state, a, params))
    compile_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    for i in range(n_steps):
        actions = sample(keys[2 * i], obs)
        obs, state, _rew, _done, _info = step(keys[2 * i + 1], state, actions, params)
    jax.block_until_ready(state)
    run_s = time.perf_counter() - t0
    sps = n_steps / run_s
    return {
        "mode": "python loop",
        "batch": 1,
        "n_steps": n_steps,
        "compile_s": compile_s,
        "run_s": run_s,
        "repeats": 1,
        "env_steps_per_s": sps,
        "agent_steps_per_s": sps * env.n_agents,
    }


# --------------------------------------------------------------------------
# The reference
# --------------------------------------------------------------------------


def _reference_module():
    """``benchmarks/reference_speed.py`` of the source checkout, or a reason it is unavailable."""
    if importlib.util.find_spec("ai_economist") is None:
        return None, (
            "ai-economist is not installed "
            "(pip install --no-deps ai-economist==1.7.1 lz4 pycryptodome GPUtil pandas)"
        )
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "reference_speed.py"
    if not path.is_file():
        return None, f"{path} not found (the reference benchmark needs a source checkout)"
    name = "jaxecon_reference_speed"
    if name in sys.modules:
        return sys.modules[name], None
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 - report and skip
        return None, f"cannot load {path}: {exc!r}"
    sys.modules[name] = module
    return module, None


def _canonical_components(components) -> list:
    from jaxecon.core.env import parse_components

    return [[n, kw] for n, kw in parse_components(components)]


def measure_reference(components, n_steps: int = 1000, seed: int = 1) -> dict:
    """Reference speed on the reference config whose component list equals ``components``.

    Returns ``measure_reference``'s dict (``env_steps_per_s``,
    ``loop_steps_per_s``, ``agent_steps_per_s``, ``config``, ...) or
    ``{"skipped": reason}``.
    """
    module, reason = _reference_module()
    if module is None:
        return {"skipped": reason}
    want = _canonical_components(components)
    match = None
    for name, cfg in module.CONFIGS.items():
        if _canonical_components(cfg["components"]) == want:
            match = name
            break
    if match is None:
        names = [n for n, _ in want]
        return {"skipped": f"no reference config has exactly the components {names}"}
    try:
        return module.measure_reference(match, n_steps=n_steps, seed=seed)
    except ImportError as exc:
        return {"skipped": f"ai-economist cannot be imported: {exc}"}


# --------------------------------------------------------------------------
# The whole benchmark
# --------------------------------------------------------------------------


def _log(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, flush=True)


def run_benchmark(
    batch_sizes=DEFAULT_BATCH_SIZES,
    n_steps: int = DEFAULT_STEPS,
    loop_steps: int | None = None,
    max_env_steps: int | None = DEFAULT_MAX_ENV_STEPS,
    economies=ECONOMIES,
    reference: bool = True,
    reference_steps: int = 1000,
    device=None,
    min_time: float = 1.0,
    seed: int = 0,
    quiet: bool = False,
) -> dict:
    """Measure every economy x batch size (plus the Python loop and the reference).

    Args:
        batch_sizes: batch sizes of the scan+vmap rollouts.
        n_steps: steps per rollout.
        max_env_steps: cap on batch x steps per rollout (see ``rollout_steps``;
            None or 0: no cap).
        loop_steps: steps of the Python-loop measurement (default ``n_steps``; 0 skips it).
        economies: names from ``ECONOMIES``.
        reference: measure ai-economist in the same run.
        reference_steps: steps of the reference measurement.
        device: a ``jax.Device`` or None (JAX's default).
        min_time: run each compiled rollout until this many seconds have passed.
    Returns:
        JSON-ready dict: ``system`` (versions, device, cpu count), ``settings``,
        ``economies`` (name -> config, components, n_agents, ``same_as``),
        ``reference`` (economy -> reference result or ``{"skipped": reason}``)
        and ``results`` (one row per measurement with ``economy``, ``mode``,
        ``batch``, ``env_steps_per_s``, ``agent_steps_per_s``, ``compile_s``,
        ``reference_env_steps_per_s``, ``ratio``).
    """
    import jax

    import jaxecon

    loop_steps = n_steps if loop_steps is None else loop_steps
    makers = _economies()
    unknown = [e for e in economies if e not in makers]
    if unknown:
        raise ValueError(f"unknown economies {unknown}; known: {list(makers)}")
    ctx = jax.default_device(device) if device is not None else contextlib.nullcontext()
    dev = device if device is not None else jax.devices()[0]
    out = {
        "system": {
            "jax_version": jax.__version__,
            "jaxecon_version": jaxecon.__version__,
            "python": platform.python_version(),
            "machine": platform.machine(),
            "cpu_count": os.cpu_count(),
            "device": str(dev),
            "platform": dev.platform,
            "date": datetime.datetime.now().isoformat(timespec="seconds"),
        },
        "settings": {
            "batch_sizes": list(batch_sizes),
            "n_steps": n_steps,
            "loop_steps": loop_steps,
            "max_env_steps": max_env_steps,
            "reference_steps": reference_steps if reference else None,
            "min_time_s": min_time,
            "seed": seed,
        },
        "economies": {},
        "reference": {},
        "results": [],
    }
    measured = {}  # canonical components (json) -> economy name
    with ctx:
        for name in economies:
            cfg = makers[name]()
            comps = _canonical_components(cfg["components"])
            sig = json.dumps(comps, sort_keys=True)
            info = {"config": cfg, "components": [n for n, _ in comps], "n_agents": cfg["n_agents"]}
            if sig in measured:
                info["same_as"] = measured[sig]
                out["economies"][name] = info
                _log(f"[{name}] same components as {measured[sig]!r}; not measured again", quiet)
                continue
            measured[sig] = name
            out["economies"][name] = info
            env = jaxecon.make_from_config(cfg)
            params = env.default_params

            if reference:
                ref = measure_reference(cfg["components"], n_steps=reference_steps, seed=seed + 1)
            else:
                ref = {"skipped": "--no-reference"}
            out["reference"][name] = ref
            if "skipped" in ref:
                _log(f"[{name}] reference skipped: {ref['skipped']}", quiet)
            else:
                _log(
                    f"[{name}] reference ai-economist ({ref['config']}): "
                    f"{ref['env_steps_per_s']:,.0f} env-steps/s (env.step only), "
                    f"{ref['loop_steps_per_s']:,.0f} steps/s incl. action sampling",
                    quiet,
                )
            ref_sps = ref.get("env_steps_per_s")

            rows = []
            if loop_steps:
                rows.append(("python loop", 1))
            rows += [("scan+vmap", b) for b in batch_sizes]
            for mode, b in rows:
                if mode == "python loop":
                    r = measure_python_loop(env, params, loop_steps, seed=seed)
                else:
                    steps_b = rollout_steps(b, n_steps, max_env_steps)
                    r = measure_rollout(env, params, b, steps_b, seed=seed, min_time=min_time)
                r["economy"] = name
                r["components"] = info["components"]
                r["n_agents"] = env.n_agents
                r["reference_env_steps_per_s"] = ref_sps
                r["ratio"] = r["env_steps_per_s"] / ref_sps if ref_sps else None
                out["results"].append(r)
                _log(
                    f"[{name}] {mode:11s} batch {b:5d} x {r['n_steps']:4d} steps: "
                    f"compile {r['compile_s']:6.1f} s, "
                    f"{r['env_steps_per_s']:12,.0f} env-steps/s",
                    quiet,
                )
    return out


def format_table(result: dict) -> str:
    """The benchmark table: one row per measurement, with the reference and the ratio."""
    head = ["economy", "mode", "batch", "steps", "env-steps/s", "agent-steps/s", "compile s",
            "ref env-steps/s", "ratio"]
    rows = []
    for r in result["results"]:
        ref = r.get("reference_env_steps_per_s")
        rows.append([
            r["economy"],
            r["mode"],
            str(r["batch"]),
            str(r["n_steps"]),
            f"{r['env_steps_per_s']:,.0f}",
            f"{r['agent_steps_per_s']:,.0f}",
            f"{r['compile_s']:.1f}",
            "-" if not ref else f"{ref:,.0f}",
            "-" if r.get("ratio") is None else f"{r['ratio']:,.1f}x",
        ])
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h)
              for i, h in enumerate(head)]
    left = {0, 1}
    fmt = lambda cells: "  ".join(  # noqa: E731
        c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(cells, widths))
    )
    lines = [fmt(head), fmt(["-" * w for w in widths])] + [fmt(row) for row in rows]
    notes = []
    for name, info in result["economies"].items():
        line = f"{name}: {', '.join(info['components'])} ({info['n_agents']} agents)"
        if "same_as" in info:
            line += f" -- same components as {info['same_as']}, measured once"
        notes.append(line)
    for name, ref in result["reference"].items():
        if "skipped" in ref:
            notes.append(f"reference for {name}: skipped ({ref['skipped']})")
        else:
            notes.append(
                f"reference for {name}: ai-economist 1.7.1 config {ref['config']!r}, "
                f"{ref['env_steps_per_s']:,.0f} env-steps/s inside env.step, "
                f"{ref['loop_steps_per_s']:,.0f} steps/s with action sampling"
            )
    s = result["system"]
    notes.append(
        f"device {s['device']} ({s['platform']}), {s['cpu_count']} CPUs, jax {s['jax_version']}; "
        "steps = rollout length (batch x steps <= "
        f"{result['settings']['max_env_steps'] or 'no cap'}); ratio = jaxecon (incl. action "
        "sampling) / reference env.step only"
    )
    return "\n".join(lines + [""] + notes)


# --------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------


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
    from jaxecon.cli import DEVICE_KINDS, nonnegative_int, positive_int

    parser.add_argument("--batch-sizes", type=_int_list, default=list(DEFAULT_BATCH_SIZES),
                        metavar="B1,B2,...",
                        help="batch sizes of the scan+vmap rollouts (default "
                             + ",".join(map(str, DEFAULT_BATCH_SIZES)) + ")")
    parser.add_argument("--steps", type=positive_int, default=DEFAULT_STEPS, metavar="N",
                        help=f"steps per rollout (default {DEFAULT_STEPS})")
    parser.add_argument("--max-env-steps", type=nonnegative_int, default=DEFAULT_MAX_ENV_STEPS,
                        metavar="N",
                        help="shorten rollouts of large batches to at most N env-steps "
                             f"(batch x steps; >= 10 steps; default {DEFAULT_MAX_ENV_STEPS}, 0: no cap)")
    parser.add_argument("--loop-steps", type=nonnegative_int, default=None, metavar="N",
                        help="steps of the Python-loop measurement (default: --steps; 0 skips it)")
    parser.add_argument("--economies", type=_economy_list, default=list(ECONOMIES),
                        metavar="E1,E2",
                        help="economies to measure (default " + ",".join(ECONOMIES) + ")")
    parser.add_argument("--no-reference", action="store_true",
                        help="do not measure the reference (ai-economist)")
    parser.add_argument("--reference-steps", type=positive_int, default=1000, metavar="N",
                        help="steps of the reference measurement (default 1000)")
    parser.add_argument("--min-time", type=float, default=1.0, metavar="S",
                        help="run each compiled rollout for at least S seconds (default 1)")
    parser.add_argument("--seed", type=nonnegative_int, default=0, metavar="S",
                        help="PRNG seed (default 0)")
    parser.add_argument("--device", choices=DEVICE_KINDS, default=None,
                        help="JAX device kind (default: JAX's default device)")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="write the results here (default runs/bench-<timestamp>.json)")
    parser.add_argument("--quiet", action="store_true",
                        help="print only the final table")


def run_from_args(args, parser: argparse.ArgumentParser) -> dict:
    """Run the benchmark for parsed ``args``; print the table; write the JSON. Returns the result."""
    from jaxecon.cli import _json_safe, select_device

    try:
        device = select_device(args.device)
    except ValueError as exc:
        parser.error(f"--device {args.device}: {exc}")
    if not args.min_time >= 0:
        parser.error(f"--min-time must be >= 0, got {args.min_time}")
    path = pathlib.Path(args.json) if args.json else pathlib.Path(
        "runs", "bench-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S") + ".json"
    )
    t0 = time.perf_counter()
    result = run_benchmark(
        batch_sizes=args.batch_sizes,
        n_steps=args.steps,
        loop_steps=args.loop_steps,
        max_env_steps=args.max_env_steps,
        economies=args.economies,
        reference=not args.no_reference,
        reference_steps=args.reference_steps,
        device=device,
        min_time=args.min_time,
        seed=args.seed,
        quiet=args.quiet,
    )
    result["wall_s"] = time.perf_counter() - t0
    print()
    print(format_table(result))
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as f:
        json.dump(_json_safe(result), f, indent=1, allow_nan=False)  # NaN -> null
        f.write("\n")
    print(f"\nwrote {path} (total {result['wall_s']:.0f} s)")
    return result


def main(argv=None) -> dict:
    """``python benchmarks/throughput.py [options]``: same options as ``jaxecon bench``."""
    parser = argparse.ArgumentParser(
        prog="throughput.py", description=__doc__.strip().splitlines()[0]
    )
    add_arguments(parser)
    args = parser.parse_args(argv)
    return run_from_args(args, parser)
