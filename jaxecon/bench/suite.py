"""The whole benchmark: every economy x batch size, the Python loop and the reference.

``run_benchmark`` builds each economy of ``jaxecon.bench.economies``, measures
it with ``jaxecon.bench.measure`` and the reference with
``jaxecon.bench.reference``, and returns one JSON-ready dict (the input of
``jaxecon.bench.report``). See ``jaxecon.bench`` for what is measured.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import platform

import jax

import jaxecon
from jaxecon.bench.defaults import ADAPTER_BATCH_SIZE, DEFAULT_BATCH_SIZES, DEFAULT_MAX_ENV_STEPS, DEFAULT_STEPS
from jaxecon.bench.economies import DEFAULT_ECONOMIES, ECONOMIES, economy_makers
from jaxecon.bench.measure import (
    load_avg,
    measure_adapter_overhead,
    measure_bandwidth,
    measure_episode_compile,
    measure_python_loop,
    measure_rollout,
    rollout_steps,
)
from jaxecon.bench.memory import measure_memory, measure_step_traffic
from jaxecon.bench.reference import measure_reference
from jaxecon.bench.shim import measure_shim
from jaxecon.core.scenario import parse_components
from jaxecon.wrappers.native import NativeObjectObservationWrapper
from jaxecon.core.registry import scenario_registry
from jaxecon.scenarios.simple_wood_and_stone.base import WoodAndStoneScenario

__all__ = ["run_benchmark"]



def _canonical_components(components) -> list:
    return [[n, kw] for n, kw in parse_components(components)]


def _has_obs_dtype(cfg: dict) -> bool:
    """Whether the scenario of ``cfg`` takes ``obs_dtype`` (the wood-and-stone scenarios)."""
    return issubclass(scenario_registry.get(cfg["scenario_name"]), WoodAndStoneScenario)


def _out_of_memory(exc: Exception) -> bool:
    """Whether ``exc`` is XLA running out of device memory (its RESOURCE_EXHAUSTED status)."""
    text = str(exc)
    return "RESOURCE_EXHAUSTED" in text or "Out of memory" in text


def _log(msg: str, quiet: bool) -> None:
    if not quiet:
        print(msg, flush=True)


def run_benchmark(
    batch_sizes=DEFAULT_BATCH_SIZES,
    n_steps: int = DEFAULT_STEPS,
    loop_steps: int | None = None,
    shim_steps: int | None = None,
    max_env_steps: int | None = DEFAULT_MAX_ENV_STEPS,
    economies=None,
    reference: bool = True,
    reference_steps: int = 1000,
    episode_compile: bool = True,
    adapter_batch_sizes=None,
    device=None,
    min_time: float = 1.0,
    seed: int = 0,
    quiet: bool = False,
    obs_dtype: str | None = None,
) -> dict:
    """Measure every economy x batch size (plus the Python loop and the reference).

    Args:
        batch_sizes: batch sizes of the scan+vmap rollouts.
        n_steps: steps per rollout.
        max_env_steps: cap on batch x steps per rollout (see ``rollout_steps``;
            None or 0: no cap).
        loop_steps: steps of the Python-loop measurement (default ``n_steps``; 0 skips it).
        shim_steps: steps of the stateful shim (``jaxecon.foundation``) stepped
            from Python, timed alternately with the reference in the same
            process (``jaxecon.bench.shim.measure_shim``); default the
            reference's step count (``reference_steps`` scaled as there); 0 skips it.
        economies: names from ``ECONOMIES`` (default ``DEFAULT_ECONOMIES``).
        reference: measure ai-economist in the same run, on the same config.
        reference_steps: steps of the reference measurement with 4 agents;
            scaled by 4 / n_agents for larger economies (at least 50).
        episode_compile: also time compiling a full-episode rollout
            (``episode_length`` steps at the largest batch size).
        adapter_batch_sizes: batch sizes at which the env wrapped in
            ``jaxecon.wrappers.NativeObjectObservationWrapper`` is timed against
            the bare env (``measure_adapter_overhead``, alternated in the same
            rounds); default ``[ADAPTER_BATCH_SIZE]`` if ``batch_sizes`` has it,
            else none; ``()`` skips the row.
        device: a ``jax.Device`` or None (JAX's default).
        min_time: run each compiled rollout until this many seconds have passed.
        obs_dtype: None (the configs as they are) or the ``obs_dtype`` of the
            wood-and-stone scenarios' observed map ("float32", "bfloat16",
            "uint8"), given to jaxecon's env of every economy whose scenario
            has it (recorded as the economy's ``obs_dtype``); the reference
            always runs the Foundation config.
    Returns:
        JSON-ready dict: ``system`` (versions, device, cpu count, measured
        ``bandwidth_bytes_per_s``, ``load_avg_start`` / ``load_avg_end``: the
        1-minute load average before and after), ``settings``, ``economies`` (name ->
        config, components, n_agents, ``memory`` per env (see
        ``measure_memory``), ``step_traffic`` and ``bytes_per_env_step``
        (see ``measure_step_traffic``), ``episode_compile_s``, ``same_as``,
        ``out_of_memory_from_batch``: the first batch size that did not fit
        in device memory; it and the larger ones are skipped),
        ``reference`` (economy -> reference result or ``{"skipped": reason}``)
        and ``results`` (one row per measurement with ``economy``, ``mode``
        (``foundation shim``, ``python loop``, ``scan+vmap``, ``object
        adapter``, which adds ``bare_env_steps_per_s``, ``overhead`` and
        ``overhead_wall``),
        ``batch``, ``env_steps_per_s``, ``agent_steps_per_s``, ``compile_s``,
        ``reference_env_steps_per_s``, ``ratio``, ``bytes_per_env_step`` and
        ``bandwidth_fraction``: env-steps/s x bytes per env-step / bandwidth).
    Raises:
        ValueError: an unknown economy name (the message lists the known ones).
    """
    loop_steps = n_steps if loop_steps is None else loop_steps
    if adapter_batch_sizes is None:
        adapter_batch_sizes = [b for b in batch_sizes if b == ADAPTER_BATCH_SIZE]
    makers = economy_makers()
    if economies is None:
        economies = list(DEFAULT_ECONOMIES)
    unknown = [e for e in economies if e not in makers]
    if unknown:
        raise ValueError(f"economies must be names from {list(makers)}, got unknown {unknown}")
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
            "load_avg_start": load_avg(),
        },
        "settings": {
            "batch_sizes": list(batch_sizes),
            "n_steps": n_steps,
            "loop_steps": loop_steps,
            "shim_steps": shim_steps,
            "max_env_steps": max_env_steps,
            "adapter_batch_sizes": list(adapter_batch_sizes),
            "reference_steps": reference_steps if reference else None,
            "min_time_s": min_time,
            "seed": seed,
            "obs_dtype": obs_dtype,
        },
        "economies": {},
        "reference": {},
        "results": [],
    }
    measured = {}  # config (json) -> economy name
    with ctx:
        bandwidth = measure_bandwidth()
        out["system"]["bandwidth_bytes_per_s"] = bandwidth
        _log(f"device {dev}: streaming bandwidth {bandwidth / 1e9:.1f} GB/s (in-place passes of x + 1 over 256 MiB)", quiet)
        for name in economies:
            cfg = makers[name]()
            comps = _canonical_components(cfg["components"])
            sig = json.dumps(cfg, sort_keys=True, default=str)
            info = {"config": cfg, "components": [n for n, _ in comps], "n_agents": cfg["n_agents"]}
            if sig in measured:
                info["same_as"] = measured[sig]
                out["economies"][name] = info
                _log(f"[{name}] same config as {measured[sig]!r}; not measured again", quiet)
                continue
            measured[sig] = name
            out["economies"][name] = info
            jax_cfg = dict(cfg)
            if obs_dtype is not None and _has_obs_dtype(cfg):
                jax_cfg["obs_dtype"] = info["obs_dtype"] = obs_dtype
            env = jaxecon.make_from_config(jax_cfg)
            params = env.default_params
            mem = measure_memory(env, params, seed=seed)
            info["memory"] = mem
            traffic = measure_step_traffic(env, params, seed=seed)
            info["step_traffic"] = traffic
            step_bytes = traffic["bytes_per_env_step"]
            info["bytes_per_env_step"] = step_bytes
            _log(
                f"[{name}] {env.n_agents} agents: state {mem['state_bytes']:,} B, obs "
                f"{mem['obs_bytes']:,} B, rollout carry {mem['carry_bytes']:,} B per env; a step "
                f"moves {step_bytes:,.0f} B (changes {traffic['state_changed_bytes']:,.0f} B of state): "
                f"floor {bandwidth / step_bytes:,.0f} env-steps/s at the measured bandwidth",
                quiet,
            )

            foundation_api = ECONOMIES[name].foundation_api if name in ECONOMIES else True
            if not foundation_api:
                ref = {"skipped": "agent groups that Foundation's object API cannot express"}
            elif reference:
                n_ref = max(50, reference_steps * 4 // max(4, env.n_agents))
                ref = measure_reference(cfg, n_steps=n_ref, seed=seed + 1)
            else:
                ref = {"skipped": "--no-reference"}
            out["reference"][name] = ref
            if "skipped" in ref:
                _log(f"[{name}] reference skipped: {ref['skipped']}", quiet)
            else:
                _log(
                    f"[{name}] reference ai-economist: "
                    f"{ref['env_steps_per_s']:,.0f} env-steps/s (env.step only), "
                    f"{ref['loop_steps_per_s']:,.0f} steps/s incl. action sampling",
                    quiet,
                )
            ref_sps = ref.get("env_steps_per_s")

            say = None if quiet else (lambda msg, n=name: _log(f"[{n}] {msg}", quiet))
            if episode_compile:
                info["episode_compile_s"] = measure_episode_compile(
                    env, params, max(batch_sizes), seed=seed, log=say)
                _log(f"[{name}] compile of a {env.episode_length}-step rollout at batch "
                     f"{max(batch_sizes)}: {info['episode_compile_s']:.1f} s", quiet)

            n_shim = max(50, reference_steps * 4 // max(4, env.n_agents)) if shim_steps is None else shim_steps
            for cpu_runtime in ((False, True) if n_shim and foundation_api else ()):  # JAX's default, and the shim's switch
                r = measure_shim(cfg, n_steps=n_shim, seed=seed + 1, reference=reference, cpu_runtime=cpu_runtime)
                r.update(economy=name, components=info["components"], n_agents=env.n_agents,
                         bytes_per_env_step=step_bytes,
                         bandwidth_fraction=r["env_steps_per_s"] * step_bytes / bandwidth)
                out["results"].append(r)
                ref_text = ("" if r["ratio"] is None else
                            f" vs the reference's {r['reference_env_steps_per_s']:,.0f} in the same "
                            f"rounds ({r['ratio']:.2f}x)")
                _log(f"[{name}] {r['mode']}: construction {r['compile_s']:.2f} s (again "
                     f"{r['construct_again_s']:.3f} s), {r['env_steps_per_s']:,.0f} env-steps/s"
                     f"{ref_text}", quiet)

            rows = []
            if loop_steps:
                rows.append(("python loop", 1))
            rows += [("scan+vmap", b) for b in batch_sizes]
            if env.has_foundation_groups:  # the native adapters read Foundation's groups "a" and "p"
                rows += [("object adapter", b) for b in adapter_batch_sizes]
            for mode, b in rows:
                if mode == "python loop":
                    r = measure_python_loop(env, params, loop_steps, seed=seed)
                elif mode == "object adapter":
                    steps_b = rollout_steps(b, n_steps, max_env_steps)
                    r = measure_adapter_overhead(env, NativeObjectObservationWrapper(env), params, b,
                                                 steps_b, seed=seed, min_time=min_time, log=say)
                else:
                    steps_b = rollout_steps(b, n_steps, max_env_steps)
                    try:
                        r = measure_rollout(env, params, b, steps_b, seed=seed, min_time=min_time, log=say)
                    except Exception as exc:  # noqa: BLE001 - only running out of memory is caught
                        if not _out_of_memory(exc):
                            raise
                        info["out_of_memory_from_batch"] = b
                        _log(f"[{name}] batch {b}: out of device memory; larger batches skipped", quiet)
                        break
                r["economy"] = name
                r["components"] = info["components"]
                r["n_agents"] = env.n_agents
                r["reference_env_steps_per_s"] = ref_sps
                r["ratio"] = r["env_steps_per_s"] / ref_sps if ref_sps else None
                r["bytes_per_env_step"] = step_bytes
                r["bandwidth_fraction"] = r["env_steps_per_s"] * step_bytes / bandwidth
                out["results"].append(r)
                extra = ("" if mode != "object adapter" else
                         f" (bare {r['bare_env_steps_per_s']:,.0f} in the same rounds: overhead "
                         f"{100 * r['overhead']:+.1f}% CPU time, {100 * r['overhead_wall']:+.1f}% wall)")
                _log(
                    f"[{name}] {mode:11s} batch {b:5d} x {r['n_steps']:4d} steps: "
                    f"compile {r['compile_s']:6.1f} s, "
                    f"{r['env_steps_per_s']:12,.0f} env-steps/s{extra}",
                    quiet,
                )
    out["system"]["load_avg_end"] = load_avg()
    return out
