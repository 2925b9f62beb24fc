"""Pytrees of arrays laid out as one flat buffer per dtype, and back.

The shim calls its jitted step once per Python step. On the CPU, the fixed
cost of a call grows with the number of arrays going in and out (about 2 us
each): an ``EnvState`` of the canonical economy has ~70 leaves, its
observations a dozen. ``TreePacking`` keeps such a tree as a handful of
1-D buffers (one per dtype) between calls; the jitted functions unpack them
(slices and reshapes, free inside XLA) and pack their results the same way,
and the host unpacks what it fetched into numpy views without copying.

Weak types survive the round trip: a leaf that was weakly typed (a Python
float parameter, say) is weakly typed again after ``unpack``, so a packed
computation promotes dtypes exactly as the unpacked one would. PRNG key
leaves are stored as their key data.
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np

from jaxecon.core.env import fusible_concatenate

try:  # keeps a leaf weakly typed (Python scalars passed to jit are weak)
    from jax._src.lax.lax import _convert_element_type as _convert_weak
except ImportError:  # pragma: no cover - a future jax without it
    _convert_weak = None

__all__ = ["TreePacking", "WEAK_TYPES_SUPPORTED"]

#: Whether weak types can be restored after unpacking (see ``TreePacking``).
WEAK_TYPES_SUPPORTED = _convert_weak is not None


@dataclasses.dataclass(frozen=True)
class _Leaf:
    shape: tuple
    dtype: np.dtype  # storage dtype (key data dtype for PRNG keys)
    size: int
    weak: bool
    key_impl: object  # the PRNG impl of a key leaf, else None


def _leaf_info(x) -> _Leaf:
    dtype = x.dtype
    shape = tuple(x.shape)
    if jax.dtypes.issubdtype(dtype, jax.dtypes.prng_key):
        impl = jax.random.key_impl(jax.random.key(0)) if not hasattr(dtype, "_impl") else dtype._impl
        data = jax.eval_shape(jax.random.key_data, jax.ShapeDtypeStruct(shape, dtype))
        return _Leaf(tuple(data.shape), np.dtype(data.dtype), int(np.prod(data.shape)), False, impl)
    return _Leaf(shape, np.dtype(dtype), int(np.prod(shape)), bool(getattr(x, "weak_type", False)), None)


class TreePacking:
    """How one pytree structure is laid out as one 1-D buffer per dtype.

    Args:
        example: a pytree with the structure, shapes and dtypes to pack
            (arrays, ``jax.ShapeDtypeStruct`` s, or Python scalars, which
            count as weakly typed scalars of JAX's default dtype).

    Attributes:
        dtypes: the buffer dtypes, in buffer order (first appearance in the
            flattened tree).
        sizes: elements per buffer.

    ``pack``/``unpack`` are traceable (use them inside ``jax.jit``);
    ``pack_numpy``/``unpack_numpy`` work on host numpy arrays.
    """

    def __init__(self, example):
        shapes = jax.eval_shape(lambda t: t, example)
        flat, self.treedef = jax.tree.flatten(shapes)
        self._leaves = [_leaf_info(x) for x in flat]
        order: dict = {}
        self._slots = []  # per leaf: (buffer index, offset)
        for leaf in self._leaves:
            b = order.setdefault(leaf.dtype, len(order))
            self._slots.append(b)
        self.dtypes = tuple(order)
        offsets = [0] * len(self.dtypes)
        slots = []
        for leaf, b in zip(self._leaves, self._slots):
            slots.append((b, offsets[b]))
            offsets[b] += leaf.size
        self._slots = slots
        self.sizes = tuple(offsets)
        self._views = [(b, off, off + leaf.size, leaf.shape) for leaf, (b, off) in zip(self._leaves, slots)]

    @property
    def n_leaves(self) -> int:
        """Number of leaves of the packed tree."""
        return len(self._leaves)

    # ----------------------------------------------------------------- traced
    def pack(self, tree) -> tuple:
        """``tree`` (same structure) as a tuple of 1-D buffers, one per dtype. Traceable."""
        leaves = self.treedef.flatten_up_to(tree)
        parts = [[] for _ in self.dtypes]
        for x, leaf, (b, _) in zip(leaves, self._leaves, self._slots):
            if leaf.key_impl is not None:
                x = jax.random.key_data(x)
            parts[b].append(jnp.ravel(jnp.asarray(x)).astype(leaf.dtype))
        return tuple(fusible_concatenate(p) if p else jnp.zeros((0,), d) for p, d in zip(parts, self.dtypes))

    def unpack(self, buffers) -> object:
        """The tree from ``pack``'s buffers (weak types and PRNG keys restored). Traceable."""
        out = []
        for leaf, (b, off) in zip(self._leaves, self._slots):
            x = jnp.reshape(buffers[b][off:off + leaf.size], leaf.shape)
            if leaf.key_impl is not None:
                x = jax.random.wrap_key_data(x, impl=leaf.key_impl)
            elif leaf.weak and _convert_weak is not None:
                x = _convert_weak(x, leaf.dtype, weak_type=True)
            out.append(x)
        return jax.tree.unflatten(self.treedef, out)

    # ------------------------------------------------------------------- host
    def pack_numpy(self, tree) -> tuple:
        """``tree`` (numpy arrays or scalars; no PRNG keys) as numpy buffers."""
        leaves = self.treedef.flatten_up_to(tree)
        bufs = [np.empty(n, d) for n, d in zip(self.sizes, self.dtypes)]
        for x, leaf, (b, off) in zip(leaves, self._leaves, self._slots):
            if leaf.key_impl is not None:
                x = jax.random.key_data(x)
            bufs[b][off:off + leaf.size] = np.ravel(np.asarray(x))
        return tuple(bufs)

    def unpack_numpy(self, buffers) -> object:
        """The tree as numpy views into ``buffers`` (no copies; PRNG key leaves
        stay as key data). Writes into a view write into its buffer."""
        return self.treedef.unflatten([buffers[b][lo:hi].reshape(shape) for b, lo, hi, shape in self._views])


def _word_dtype(dtype: np.dtype):
    """The 32-bit word view of a leaf dtype: (dtype to convert to first, words per element)."""
    if dtype.itemsize == 8:
        return dtype, 2
    if dtype.itemsize == 4:
        return dtype, 1
    if dtype.kind == "f":
        return np.dtype(np.float32), 1  # float16/bfloat16: exact in float32
    if dtype.kind == "u" or dtype.kind == "b":
        return np.dtype(np.uint32), 1
    return np.dtype(np.int32), 1


class WordPacking:
    """A pytree of arrays as ONE uint32 buffer (for outputs fetched to the host).

    Every leaf is stored bit-exactly as 32-bit words: 4-byte dtypes are
    bitcast, 8-byte dtypes take two words per element, narrower integers and
    bools are widened to int32/uint32 first (value-preserving) and narrowed
    again on the host. One buffer means one transfer and one array to wrap.

    Args:
        example: a pytree of arrays or ``jax.ShapeDtypeStruct`` s (no PRNG keys).
    """

    def __init__(self, example):
        flat, self.treedef = jax.tree.flatten(jax.eval_shape(lambda t: t, example))
        self._leaves = []
        off = 0
        for x in flat:
            dtype = np.dtype(x.dtype)
            wide, words = _word_dtype(dtype)
            wide = dtype if wide == dtype else wide  # identity marks "no conversion"
            size = int(np.prod(x.shape))
            self._leaves.append((tuple(x.shape), dtype, wide, words, off, size))
            off += size * words
        self.size = off

    def pack(self, tree):
        """``tree`` as one uint32 [size] buffer. Traceable."""
        parts = []
        for x, (shape, dtype, wide, words, off, size) in zip(self.treedef.flatten_up_to(tree), self._leaves):
            x = jnp.ravel(jnp.asarray(x))
            if wide != dtype:
                x = x.astype(wide)
            parts.append(jnp.ravel(jax.lax.bitcast_convert_type(x, jnp.uint32)))
        return fusible_concatenate(parts) if parts else jnp.zeros((0,), jnp.uint32)

    def unpack_numpy(self, buf: np.ndarray):
        """The tree from a host copy of ``pack``'s buffer: numpy views into it
        for 32- and 64-bit leaves, small converted copies for narrower ones."""
        out = []
        for shape, dtype, wide, words, off, size in self._leaves:
            x = buf[off:off + size * words].view(wide).reshape(shape)
            out.append(x if wide is dtype else x.astype(dtype))
        return self.treedef.unflatten(out)
