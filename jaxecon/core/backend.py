"""XLA:CPU-specific code generation: each trick, where it applies, and what it buys.

jaxecon's arithmetic is the same on every backend; these helpers change only
the program XLA compiles, where XLA:CPU's choices cost time on the small
arrays of one economy. Each keeps values, shapes and dtypes bit-identical,
and its docstring states the measurement behind it. The figures, with the
load they were taken at, are also in ``benchmarks/RESULTS.md`` ("XLA:CPU
code generation"); ``python benchmarks/backend_tricks.py`` measures each
again, with and without.

- ``fusible_concatenate`` (with ``FUSIBLE_CONCAT_OPERANDS``): wide
  concatenates as trees XLA:CPU fuses; used by the flattened observations
  (``BaseEnvironment``) and the shim's packing (``jaxecon.foundation.packing``).
- ``pad_onto_canvas``: a padded map written once, not recomputed per window
  element; used by the wood-and-stone observation windows.
- ``unrolled_threefry_on_cpu``: the Threefry hash unrolled on the CPU; used
  where the shim lowers its compiled functions (``jaxecon.foundation.engine``,
  ``jaxecon.foundation.host_engine``).

This module imports nothing of jaxecon, so every layer may use it.
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp

__all__ = ["FUSIBLE_CONCAT_OPERANDS", "fusible_concatenate", "pad_onto_canvas", "unrolled_threefry_on_cpu"]

#: XLA:CPU fuses a concatenate with its producers only up to this many
#: operands (its ``kMaxConcatenateArguments``); a wider one materialises every
#: operand in a buffer of its own first (one kernel each) and then copies.
FUSIBLE_CONCAT_OPERANDS = 8


def fusible_concatenate(parts: list, axis: int = 0) -> jax.Array:
    """``jnp.concatenate(parts, axis)``, built as a tree of concatenates of at
    most ``FUSIBLE_CONCAT_OPERANDS`` operands so that XLA:CPU fuses each with
    its producers (an ``optimization_barrier`` on every inner node keeps XLA's
    simplifier from merging the tree back into one wide concatenate). Same
    values, same shape and dtype.

    Backend: built the same way everywhere; it pays on XLA:CPU, whose fusion
    limit it follows (not measured on a GPU or TPU).

    Measured on the Foundation shim's canonical step (4 agents, 25x25; its
    packed state and outputs and the flattened observations concatenate
    dozens of leaves): 159 kernels in the compiled step instead of 245, and
    13% and 23% more CPU time per step without it (jax 0.10.2, two runs of
    ``benchmarks/backend_tricks.py --tricks threefry,concat``, load 2-5;
    231 executed thunks instead of 279 on 2026-12-01).
    """
    k = FUSIBLE_CONCAT_OPERANDS
    while len(parts) > k:
        parts = [jax.lax.optimization_barrier(jnp.concatenate(parts[i:i + k], axis=axis))
                 if len(parts[i:i + k]) > 1 else parts[i] for i in range(0, len(parts), k)]
    return jnp.concatenate(parts, axis=axis) if len(parts) > 1 else parts[0]


def pad_onto_canvas(x: jax.Array, r: int, zero: jax.Array) -> jax.Array:
    """``x`` [K, H, W] zero-padded by ``r`` on both spatial sides: [K, H + 2r, W + 2r].

    The same values as ``jnp.pad``, written into a zero canvas by a
    ``dynamic_update_slice`` at (``zero``, ``zero`` + r, ``zero`` + r), where
    ``zero`` is an int32 [] equal to 0 that XLA cannot fold to a constant
    (the caller passes ``min(timestep, 0)``). XLA:CPU fuses a pad and
    everything that computes ``x`` (the step's regeneration arithmetic, the
    channel concatenation) into each consumer; a window gather reads every
    tile about n (2r+1)^2 / (H W) times, so with ``jnp.pad`` that chain is
    recomputed per window element. Under ``vmap`` an update at a traced
    start becomes a scatter, which XLA never fuses into its consumers: ``x``
    is computed once and the windows read a plain buffer.

    Backend: the same program everywhere; the caller chooses it only when
    the windows read each tile more than once (n (2r+1)^2 > H W), from
    XLA:CPU measurements (not measured on a GPU or TPU).

    Measured on XLA:CPU: gtb100 (100 agents, 40x40, 64 economies vmapped)
    takes 9% and 21% more CPU time per step with ``jnp.pad`` (jax 0.10.2,
    two runs of ``benchmarks/backend_tricks.py --tricks canvas``, load 3-5).
    On 2026-12-01: with ``jnp.pad`` the recomputation took 44% of a
    100-agent step; this canvas was 7% faster than one written by a scatter
    of rows; and with few agents on a large map the extra pass costs more
    than the recomputation (2x slower on the 4-agent canonical economy,
    which therefore keeps ``jnp.pad``).
    """
    k, h, w = x.shape
    canvas = jnp.zeros((k, h + 2 * r, w + 2 * r), x.dtype)
    return jax.lax.dynamic_update_slice(canvas, x, (zero, zero + r, zero + r))


@contextlib.contextmanager
def unrolled_threefry_on_cpu():
    """While active, ``jax.jit(...).lower`` emits the Threefry hash unrolled on the CPU.

    JAX lowers ``threefry2x32`` on the CPU as a 5-trip ``while`` loop (to
    keep compiles short) and unrolled on GPUs and TPUs. For the small arrays
    of one economy the loop's per-iteration overhead dominates. The hash, and
    so every random number, is bit-identical either way. Uses JAX internals
    (the CPU entry of the lowering table); where they are missing it does
    nothing.

    Backend: changes only the CPU lowering; on a GPU or TPU the lowering is
    unrolled already and this changes nothing.

    Measured on the shim's canonical step (4 agents, 25x25, one economy per
    call): 14% and 16% more CPU time per step with the loop (jax 0.10.2,
    two runs of ``benchmarks/backend_tricks.py --tricks threefry,concat``,
    load 2-5; about a quarter on 2026-12-01).
    """
    try:
        from jax._src.interpreters import mlir
        from jax._src.random import threefry2x32 as tf

        table = mlir._platform_specific_lowerings["cpu"]
        prim, rule = tf.threefry2x32_p, tf._threefry2x32_lowering_rule
    except (ImportError, AttributeError, KeyError):  # pragma: no cover - other jax versions
        yield
        return
    saved = table.get(prim)
    mlir.register_lowering(prim, rule, platform="cpu", inline=False)
    try:
        yield
    finally:
        if saved is None:
            table.pop(prim, None)
        else:
            table[prim] = saved
