"""XLA:CPU-specific code generation: each trick, where it applies, and what it buys.

jaxecon's arithmetic is the same on every backend; these helpers change only
the program XLA compiles, where XLA:CPU's choices cost time on the small
arrays of one economy (or on one economy's long vectors). Each keeps values,
shapes and dtypes bit-identical (``sort_floats``: the same values, see its
docstring for the order of -0.0 and +0.0), and its docstring states what it
changes in the program and where it pays. The measurements behind each,
with the load they were taken at, are in ``benchmarks/RESULTS.md``
("Measurements behind the code's choices" and "XLA:CPU code generation");
``python benchmarks/backend_tricks.py`` measures each again, with and
without.

- ``fusible_concatenate`` (with ``FUSIBLE_CONCAT_OPERANDS``): wide
  concatenates as trees XLA:CPU fuses; used by the flattened observations
  (``BaseEnvironment``) and the shim's packing (``jaxecon.foundation.packing``).
- ``pad_onto_canvas``: a padded map written once, not recomputed per window
  element; used by the wood-and-stone observation windows.
- ``sort_floats``: a float vector sorted as integer keys (XLA:CPU's float
  comparator is several times slower); used by the tax component's sorted
  last incomes (``PeriodicBracketTax.observe``).
- ``unrolled_threefry_impl``: a PRNG implementation whose keys draw JAX's
  Threefry numbers with the hash unrolled on the CPU; the shim's compiled
  functions wrap their key data with it (``jaxecon.foundation.engine``,
  ``jaxecon.foundation.host_engine``), and the gymnax and JaxMARL fronts
  rewrap their keys with ``as_unrolled_key``.

This module imports nothing of jaxecon, so every layer may use it.
"""

from __future__ import annotations

import math

import jax
import jax.extend.random as jax_random
import jax.numpy as jnp

__all__ = [
    "FUSIBLE_CONCAT_OPERANDS", "SORT_AS_KEYS_MIN", "as_unrolled_key", "fusible_concatenate", "pad_onto_canvas", "sort_floats",
    "threefry2x32_unrolled", "unrolled_threefry_impl",
]

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

    It pays on the Foundation shim's canonical step (4 agents, 25x25; its
    packed state and outputs and the flattened observations concatenate
    dozens of leaves): fewer kernels in the compiled step and less CPU time
    per step (measured: benchmarks/RESULTS.md, "Measurements behind the
    code's choices").
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

    On XLA:CPU it pays with many agents (gtb100: 100 agents, 40x40, 64
    economies vmapped, where the recomputation is a large share of a step;
    a canvas written by a scatter of rows pays less), and with few agents
    on a large map the extra pass costs more than the recomputation: the
    4-agent canonical economy keeps ``jnp.pad`` (measured:
    benchmarks/RESULTS.md, "Measurements behind the code's choices").
    """
    k, h, w = x.shape
    canvas = jnp.zeros((k, h + 2 * r, w + 2 * r), x.dtype)
    return jax.lax.dynamic_update_slice(canvas, x, (zero, zero + r, zero + r))


#: ``sort_floats`` sorts vectors at least this long as integer keys (shorter ones
#: by ``jnp.sort``, whose cost there is negligible).
SORT_AS_KEYS_MIN = 256


def _order_keys(x: jax.Array) -> jax.Array:
    """Signed integer keys of float ``x`` in the order of its values: the bit
    pattern, its magnitude bits flipped for negative numbers (an involution,
    ``_order_keys_inverse``)."""
    itype = jnp.int64 if x.dtype == jnp.float64 else jnp.int32
    bits = jax.lax.bitcast_convert_type(x, itype)
    return _order_keys_inverse(bits)


@jax.custom_jvp
def sort_floats(x: jax.Array) -> jax.Array:
    """``jnp.sort(x)`` of a float32/float64 vector ``x`` [n], sorted as integer keys.

    Same dtype and shape, the same values in the same order, except: within
    a run of zeros, -0.0 comes before +0.0 (``jnp.sort``, stable, keeps their
    input order; the values compare equal); a NaN whose sign bit is set comes
    out first, not last (no economy quantity is NaN; ``checked_step``
    reports one). Differentiable: the tangent is
    permuted as ``jnp.sort``'s (by a stable argsort, computed only under
    differentiation). Vectors shorter than ``SORT_AS_KEYS_MIN`` go to
    ``jnp.sort``.

    Backend: the same program everywhere; it pays on XLA:CPU, where a float
    sort compares with a NaN-aware total-order comparator.

    The one-step economy with 10,000 agents observes 10,000 sorted values
    every step, where this sort is several times faster than ``jnp.sort``
    on XLA:CPU (measured: benchmarks/RESULTS.md, "Measurements behind the
    code's choices").

    Raises:
        ValueError: ``x`` is not a 1-D float32/float64 array.
    """
    if x.ndim != 1 or x.dtype not in (jnp.float32, jnp.float64):
        raise ValueError(f"sort_floats sorts a 1-D float32/float64 vector, got {x.dtype} {x.shape}")
    if x.shape[0] < SORT_AS_KEYS_MIN:
        return jnp.sort(x)
    keys = jax.lax.sort(_order_keys(x))
    return jax.lax.bitcast_convert_type(_order_keys_inverse(keys), x.dtype)


def _order_keys_inverse(keys: jax.Array) -> jax.Array:
    """The bit patterns of ``_order_keys`` (the flip is its own inverse)."""
    flip = jnp.asarray(jnp.iinfo(keys.dtype).max, keys.dtype)
    return keys ^ ((keys >> (jnp.iinfo(keys.dtype).bits - 1)) & flip)


@sort_floats.defjvp
def _sort_floats_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    order = jnp.argsort(x, stable=True)
    return x[order], t[order]


_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _rotate_left(x: jax.Array, d: int) -> jax.Array:
    return jax.lax.shift_left(x, jnp.uint32(d)) | jax.lax.shift_right_logical(x, jnp.uint32(32 - d))


def threefry2x32_unrolled(k1, k2, x1, x2) -> tuple:
    """The Threefry-2x32 hash (20 rounds) of the count words ``x1``, ``x2``
    under the key words ``k1``, ``k2``, written as plain unrolled ``jax.lax``
    rounds: uint32 arrays broadcast together; returns the two uint32 output
    words. Bit-identical to JAX's ``threefry2x32`` primitive (the rounds,
    rotations and key schedule of Salmon et al. 2011, as in JAX's
    ``jax/_src/random/threefry2x32.py``)."""
    ks = (k1, k2, k1 ^ k2 ^ jnp.uint32(0x1BD11BDA))
    x = [x1 + ks[0], x2 + ks[1]]
    for i in range(5):
        for r in _ROTATIONS[i % 2]:
            x[0] = x[0] + x[1]
            x[1] = x[0] ^ _rotate_left(x[1], r)
        x[0] = x[0] + ks[(i + 1) % 3]
        x[1] = x[1] + ks[(i + 2) % 3] + jnp.uint32(i + 1)
    return x[0], x[1]


def _counts(shape: tuple) -> tuple:
    """JAX's partitionable Threefry counts of ``shape``: the row-major element
    index as (high, low) uint32 words, each of ``shape``.

    Raises:
        NotImplementedError: more than 2**32 elements.
    """
    size = math.prod(shape)
    if size > 1 << 32:
        raise NotImplementedError(f"the unrolled Threefry draws at most 2**32 numbers at once, not {size}")
    lo = jax.lax.iota(jnp.uint32, size).reshape(shape) if shape else jnp.zeros((), jnp.uint32)
    return jnp.zeros(shape, jnp.uint32), lo


def _split(key: jax.Array, shape: tuple) -> jax.Array:
    hi, lo = _counts(tuple(shape))
    b1, b2 = threefry2x32_unrolled(key[0], key[1], hi, lo)
    return jnp.stack([b1, b2], axis=-1)


def _fold_in(key: jax.Array, data: jax.Array) -> jax.Array:
    data = jnp.asarray(data, jnp.uint32)  # threefry_seed: the words (0, data) hashed as one pair
    b1, b2 = threefry2x32_unrolled(key[0], key[1], jnp.zeros((1,), jnp.uint32), data.reshape(1))
    return jnp.concatenate([b1, b2])


def _random_bits(key: jax.Array, bit_width: int, shape: tuple) -> jax.Array:
    hi, lo = _counts(tuple(shape))
    b1, b2 = threefry2x32_unrolled(key[0], key[1], hi, lo)
    if bit_width == 64:
        return jax.lax.shift_left(b1.astype(jnp.uint64), jnp.uint64(32)) | b2.astype(jnp.uint64)
    dtype = {8: jnp.uint8, 16: jnp.uint16, 32: jnp.uint32}[bit_width]
    return (b1 ^ b2).astype(dtype)


_UNROLLED_THREEFRY = jax_random.define_prng_impl(
    key_shape=(2,), seed=jax_random.threefry_prng_impl.seed, split=_split,
    random_bits=_random_bits, fold_in=_fold_in, name="threefry2x32_unrolled", tag="fru")


def unrolled_threefry_impl():
    """The PRNG implementation for ``jax.random.wrap_key_data(data,
    impl=...)`` whose keys give the same numbers as JAX's default keys with
    the Threefry hash unrolled on every backend; None (JAX's default
    implementation) where JAX's settings make them differ: the default PRNG
    is not ``threefry2x32`` or ``jax_threefry_partitionable`` is off.

    Its split, fold-in and random bits are JAX's partitionable Threefry
    (``jax/_src/random/threefry2x32.py``) written with public ``jax.lax``
    operations (``threefry2x32_unrolled``; ``jax.extend.random``'s
    ``define_prng_impl``), so every draw, and the key data of every split,
    is bit-identical to the default keys' (tests/test_backend.py); it changes
    nothing of JAX's own, only the program of a function whose keys use it.

    Backend: JAX lowers its ``threefry2x32`` primitive on the CPU as a 5-trip
    ``while`` loop (to keep compiles short) and unrolled on GPUs and TPUs;
    this hash is unrolled everywhere. For the small arrays of one economy
    the loop's per-iteration overhead dominates.

    Measured on the shim's canonical step (4 agents, 25x25, one economy per
    call), with JAX's CPU loop: see ``benchmarks/RESULTS.md`` ("XLA:CPU code
    generation") and ``python benchmarks/backend_tricks.py --tricks threefry``.
    """
    config = jax.config
    if config.jax_default_prng_impl != "threefry2x32" or not config.jax_threefry_partitionable:
        return None
    return _UNROLLED_THREEFRY


def as_unrolled_key(key):
    """``key`` rewrapped as a key of ``unrolled_threefry_impl()`` where it is one
    key of JAX's default Threefry (a typed ``threefry2x32`` key of shape (), or
    a raw uint32 [2] key while that is JAX's default); anything else (another
    implementation, a batch of keys, not a key) is returned unchanged, for the
    caller's own checks to name.

    The key data is the same, so every draw and split is bit-identical to
    ``key``'s (tests/test_backend.py); only the compiled program changes. The
    gymnax and JaxMARL fronts rewrap the keys they are given (their state
    holds no key, so a caller never sees the rewrapped type): vmapped in a
    training script, the economy's draws then compile shorter and run
    faster. ``python benchmarks/front_compile.py`` measures it (the figures are
    in ``benchmarks/RESULTS.md``, "What the economy adds to a training
    script's compile"). The functional env itself does not rewrap: one
    un-vmapped gather-trade-build economy (``bench.scaling.scaling_config(4)``)
    compiles its step more slowly rewrapped
    (measured: benchmarks/RESULTS.md, "Measurements behind the code's choices").
    """
    dtype = getattr(key, "dtype", None)
    impl = unrolled_threefry_impl()
    if impl is None or dtype is None:
        return key
    if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        # (unrolled_threefry_impl is not None: JAX's default is threefry2x32)
        if key.shape != () or str(jax.random.key_impl(key)) != jax.config.jax_default_prng_impl:
            return key
        key = jax.random.key_data(key)
    elif dtype != jnp.uint32 or key.shape != (2,):
        return key
    return jax.random.wrap_key_data(key, impl=impl)
