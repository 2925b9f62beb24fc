"""What each XLA:CPU trick of ``jaxecon.core.backend`` buys: CPU time per step with it and without.

    python benchmarks/backend_tricks.py [--tricks threefry,concat,canvas] [--steps 2000]
                                        [--rounds 5] [--batch 64] [--scan-steps 20]

Tricks (each measured as it ships, "on", against the program XLA gets without it, "off"):

- ``threefry``: the Foundation shim's canonical economy (4 agents, 25x25, one
  economy per call) stepped from Python, its engine's keys of
  ``unrolled_threefry_impl`` and JAX's default keys (the CPU loop);
- ``concat``: the same shim economy with ``fusible_concatenate``'s trees and
  with one plain concatenate (``FUSIBLE_CONCAT_OPERANDS`` set above any
  operand count);
- ``canvas``: gtb100 (100 agents, 40x40: the 11x11 windows read each tile
  about 8 times), ``--batch`` economies vmapped in a jitted ``lax.scan`` of
  ``--scan-steps`` random valid steps, the windows' padded maps written by
  ``pad_onto_canvas`` and by ``jnp.pad``.

Each variant is built (compiled) once, outside the timing; then the variants
alternate for ``--rounds`` rounds, so that a changing load favours neither.
The table gives the median CPU time (``time.process_time``: every thread of
this process) per economy-step in us, off / on, and the kernels of each
variant's compiled step: the instructions of its entry computation that run
(fusions, copies, loops, custom calls; not parameters, constants, tuples or
bitcasts), a count that does not depend on the load. The shim's figures count
only the time inside ``env.step`` (the random actions are drawn outside).
JAX's persistent compilation cache is off for this process. Without
``canvas`` the process sets up JAX's CPU runtime as the shim's switch does
(``jaxecon.foundation.cpu_runtime``: one thread, no asynchronous
dispatch); with it, JAX's defaults, which a batched rollout wants. So
measure ``canvas`` in a run of its own.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import pathlib
import re
import statistics
import sys
import time

# Run from a source checkout without installing: the repository root on the path.
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))
os.environ["JAXECON_COMPILATION_CACHE"] = "0"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

import jaxecon  # noqa: E402
from jaxecon import configs, foundation  # noqa: E402
from jaxecon.core import backend  # noqa: E402
from jaxecon.foundation import engine as engine_module  # noqa: E402
from jaxecon.foundation.cpu_runtime import configure_cpu_runtime  # noqa: E402
from jaxecon.interop.reference import random_valid_actions  # noqa: E402
from jaxecon.rollout import RolloutCarry, scan_steps  # noqa: E402
from jaxecon.scenarios.simple_wood_and_stone import base as wood_and_stone  # noqa: E402

TRICKS = ("threefry", "concat", "canvas")

#: Entry-computation instructions that are no kernel of their own.
_NOT_KERNELS = {"parameter", "constant", "get-tuple-element", "tuple", "bitcast"}


@contextlib.contextmanager
def _patched(module, name, value):
    """``module.name`` set to ``value`` while active."""
    saved = getattr(module, name)
    setattr(module, name, value)
    try:
        yield
    finally:
        setattr(module, name, saved)


def _without(trick: str):
    """A context in which everything traced gets the program without ``trick``."""
    if trick == "threefry":
        return _patched(engine_module, "unrolled_threefry_impl", lambda: None)
    if trick == "concat":
        return _patched(backend, "FUSIBLE_CONCAT_OPERANDS", 1 << 30)
    return _patched(wood_and_stone, "pad_onto_canvas",
                    lambda x, r, zero: jnp.pad(x, ((0, 0), (r, r), (r, r))))


def _kernels(compiled) -> int:
    """The instructions of ``compiled``'s entry computation that run as kernels."""
    text = compiled.as_text()
    entry = text[text.index("\nENTRY"):]
    entry = entry[:entry.index("\n}")]
    ops = re.findall(r"^\s*(?:ROOT )?\S+ = .*? ([a-z][\w-]*)\(", entry, flags=re.M)
    return sum(op not in _NOT_KERNELS for op in ops)


def _shim_variant(trick_off: str | None):
    """A shim env of the canonical economy built (and stepped once) with
    ``trick_off`` removed; returns ``(run, kernels)``, ``run(n) -> CPU-s per step``."""
    cfg = configs.default_config()
    cfg["dense_log_frequency"] = None
    name = cfg.pop("scenario_name")
    engine_module.clear_engine_cache()
    with _without(trick_off) if trick_off else contextlib.nullcontext():
        env = foundation.make_env_instance(name, **cfg, seed=0)
        obs = env.reset()
        env.step()
    for compiling in vars(env._engine).values():  # its other compiles run in threads: wait for them
        if isinstance(compiling, engine_module._Compiled):
            compiling._future.result()
    rng = np.random.default_rng(0)
    state = {"obs": obs}

    def run(n: int) -> float:
        spent = 0.0
        obs = state["obs"]
        for _ in range(n):
            actions = random_valid_actions(obs, env, rng)
            t0 = time.process_time()
            obs, _rew, done, _info = env.step(actions)
            spent += time.process_time() - t0
            if done["__all__"]:
                obs = env.reset()
        state["obs"] = obs
        return spent / n

    return run, _kernels(env._engine._step._future.result())  # the engine's compiled step


def _scan_variant(trick_off: str | None, batch: int, scan_steps_n: int):
    """gtb100, ``batch`` economies in a jitted scan of ``scan_steps_n`` steps,
    compiled with ``trick_off`` removed; returns ``(run, kernels)``, ``run(n) -> CPU-s
    per economy-step``."""
    env = jaxecon.make_from_config(configs.gtb100_config())
    params = env.default_params
    keys = jax.random.split(jax.random.key(0), batch)
    obs, st = jax.vmap(env.reset, in_axes=(0, None))(keys, params)
    carry = RolloutCarry(obs, st, jax.random.split(jax.random.key(1), batch))
    fn = jax.jit(lambda c, p: scan_steps(env, p, c, scan_steps_n, batched=True)[0])
    with _without(trick_off) if trick_off else contextlib.nullcontext():
        compiled = fn.lower(carry, params).compile()
    state = {"carry": jax.block_until_ready(compiled(carry, params))}

    def run(n: int) -> float:
        calls = max(1, n // (batch * scan_steps_n))
        t0 = time.process_time()
        for _ in range(calls):
            state["carry"] = compiled(state["carry"], params)
        jax.block_until_ready(state["carry"])
        return (time.process_time() - t0) / (calls * batch * scan_steps_n)

    return run, _kernels(compiled)


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tricks", default=",".join(TRICKS), help="comma-separated, of " + ", ".join(TRICKS))
    ap.add_argument("--steps", type=int, default=2000, help="economy-steps per variant per round")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64, help="canvas: economies per call")
    ap.add_argument("--scan-steps", type=int, default=20, help="canvas: steps per compiled call")
    args = ap.parse_args(argv)
    tricks = [t for t in args.tricks.split(",") if t]
    unknown = sorted(set(tricks) - set(TRICKS))
    if unknown:
        ap.error(f"unknown tricks {unknown}; choose from {list(TRICKS)}")
    if "canvas" not in tricks:
        configure_cpu_runtime(enable=True)
    print(f"jax {jax.__version__}, {jax.devices()[0].platform}, load {os.getloadavg()[0]:.2f}")
    print(f"{'trick':<10} {'economy':<20} {'on us/step':>11} {'off us/step':>12} {'off/on':>7} "
          f"{'kernels on':>11} {'kernels off':>12}")
    for trick in tricks:
        if trick == "canvas":
            variants = {k: _scan_variant(off, args.batch, args.scan_steps)
                        for k, off in (("on", None), ("off", trick))}
            where = f"gtb100, {args.batch} vmapped"
        else:
            variants = {k: _shim_variant(off) for k, off in (("on", None), ("off", trick))}
            where = "canonical, shim"
        for run, _ in variants.values():  # warm-up
            run(min(50, args.steps))
        times = {k: [] for k in variants}
        for _ in range(args.rounds):
            for k, (run, _) in variants.items():
                times[k].append(run(args.steps))
        on, off = (statistics.median(times[k]) * 1e6 for k in ("on", "off"))
        print(f"{trick:<10} {where:<20} {on:>11.1f} {off:>12.1f} {off / on:>7.2f} "
              f"{variants['on'][1]:>11d} {variants['off'][1]:>12d}", flush=True)
    print(f"load {os.getloadavg()[0]:.2f}, process CPU {time.process_time():.0f} s")


if __name__ == "__main__":
    main()
