"""Pytrees of arrays laid out as one flat buffer per dtype, and back.

The shim calls its jitted step once per Python step. On the CPU, the fixed
cost of a call grows with the number of arrays going in and out (measured:
benchmarks/RESULTS.md, "Measurements behind the code's choices"): an
``EnvState`` of the canonical economy has ~70 leaves, its observations a
dozen. ``TreePacking`` keeps such a tree as a handful of
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

from jaxecon.core.backend import fusible_concatenate

try:  # keeps a leaf weakly typed (Python scalars passed to jit are weak)
    from jax._src.lax.lax import _convert_element_type as _convert_weak
except ImportError:  # pragma: no cover - a future jax without it
    _convert_weak = None

__all__ = ["TreePacking", "WEAK_TYPES_SUPPORTED", "WordPacking", "WordSlot"]

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
        impl = []  # the key's PRNG implementation, read from an abstract key of its dtype
        data = jax.eval_shape(lambda k: impl.append(jax.random.key_impl(k)) or jax.random.key_data(k),
                              jax.ShapeDtypeStruct(shape, dtype))
        return _Leaf(tuple(data.shape), np.dtype(data.dtype), int(np.prod(data.shape)), False, impl[0])
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


def _store_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a leaf is stored as in the word buffer: its own, except bools
    (stored as uint8 0/1, which a host ``bool`` view reads back exactly)."""
    return np.dtype(np.uint8) if dtype == np.bool_ else dtype


@dataclasses.dataclass(frozen=True)
class WordSlot:
    """Where one leaf lies in a ``WordPacking`` buffer.

    Attributes:
        shape: the leaf's shape. dtype: its dtype.
        view: index into ``WordPacking.host_views``: below
            ``len(view_dtypes)``, the whole word buffer viewed as that dtype;
            above, a separate leaf, flattened.
        lo, hi: the leaf's elements in that view (``hi - lo`` = its size).
    """

    shape: tuple
    dtype: np.dtype
    view: int
    lo: int
    hi: int


class WordPacking:
    """A pytree of arrays as ONE uint32 buffer (for outputs fetched to the host).

    Every leaf is stored bit-exactly and densely: 4-byte dtypes are bitcast
    to one word per element, 8-byte dtypes to two (at an even word offset),
    1- and 2-byte dtypes (bools as uint8 0/1) are packed 4 or 2 to a word
    (the leaf padded with zeros to whole words). So on the host every leaf is
    a slice of the whole buffer viewed as its dtype: no conversion, no copy.
    One buffer means one transfer and one array to wrap.

    Leaves of ``separate_ndim`` or more dimensions (the observed maps) can
    go out as arrays of their own instead, after the word buffer. Why:
    XLA:CPU computes a leaf fused into the 1-D buffer in one flat loop over
    its elements; for the observation windows (a gather per tile of each
    agent's view) that loop is several times slower than the window's own
    4-D loop, and the extra output costs the host less than it saves
    (profile: docs/foundation_shim.md, "What it costs").

    Args:
        example: a pytree of arrays or ``jax.ShapeDtypeStruct`` s (no PRNG keys).
        separate_ndim: None (every leaf in the word buffer) or an int >= 1.

    Attributes:
        size: the word buffer's length in words.
        view_dtypes: the dtypes the host views the word buffer as; view
            ``len(view_dtypes) + j`` is the j-th separate leaf, flattened
            (``WordSlot.view``).
        slots: per leaf, in flattening order, its ``WordSlot``.
        n_separate: the number of separate leaves.
        treedef: the tree structure.

    Raises:
        ValueError: ``separate_ndim`` is neither None nor an int >= 1.
    """

    def __init__(self, example, separate_ndim=None):
        if separate_ndim is not None and (type(separate_ndim) is not int or separate_ndim < 1):
            raise ValueError(f"separate_ndim must be None or an int >= 1, got {separate_ndim!r}")
        flat, self.treedef = jax.tree.flatten(jax.eval_shape(lambda t: t, example))
        #: per leaf: True where it goes out as its own array
        self._separate = [separate_ndim is not None and len(x.shape) >= separate_ndim for x in flat]
        views: dict = {}
        slots, self._pads = [], []  # _pads: per leaf, zero words before it (8-byte alignment)
        off = 0  # in words
        for x, separate in zip(flat, self._separate):
            dtype = np.dtype(x.dtype)
            size = int(np.prod(x.shape))
            if separate:
                slots.append(None)  # placed below, after the word buffer's views
                self._pads.append(0)
                continue
            pad = off % 2 if dtype.itemsize == 8 else 0
            off += pad
            view = views.setdefault(dtype, len(views))
            lo = off * 4 // dtype.itemsize  # (off is even for 8-byte dtypes)
            slots.append(WordSlot(tuple(x.shape), dtype, view, lo, lo + size))
            self._pads.append(pad)
            off += -(-size * dtype.itemsize // 4)
        if any(d.itemsize == 8 for d in views):
            off += off % 2  # the buffer viewed as an 8-byte dtype
        self.size = off
        self.view_dtypes = tuple(views)
        j = len(views)
        for i, x in enumerate(flat):
            if self._separate[i]:
                size = int(np.prod(x.shape))
                slots[i] = WordSlot(tuple(x.shape), np.dtype(x.dtype), j, 0, size)
                j += 1
        self.n_separate = j - len(views)
        self.slots = tuple(slots)
        # host plan per leaf: (view index, lo, hi, shape or None when 1-D)
        self._plan = [(sl.view, sl.lo, sl.hi, None if len(sl.shape) == 1 else sl.shape) for sl in slots]

    def pack(self, tree) -> tuple:
        """``tree`` as ``(words, *separate)``: the uint32 [size] word buffer,
        then the separate leaves as they are. Traceable."""
        parts, separate = [], []
        for x, sl, pad, sep in zip(self.treedef.flatten_up_to(tree), self.slots, self._pads, self._separate):
            if sep:
                separate.append(jnp.asarray(x))
                continue
            x = jnp.ravel(jnp.asarray(x))
            if pad:
                parts.append(jnp.zeros((pad,), jnp.uint32))
            itemsize = sl.dtype.itemsize
            if itemsize < 4:
                per = 4 // itemsize
                x = x.astype(_store_dtype(sl.dtype))
                extra = -x.shape[0] % per
                if extra:
                    x = jnp.concatenate([x, jnp.zeros((extra,), x.dtype)])
                x = x.reshape(-1, per)
            parts.append(jnp.ravel(jax.lax.bitcast_convert_type(x, jnp.uint32)))
        total = sum(p.shape[0] for p in parts)
        if total < self.size:
            parts.append(jnp.zeros((self.size - total,), jnp.uint32))
        words = fusible_concatenate(parts) if parts else jnp.zeros((0,), jnp.uint32)
        return (words, *separate)

    def host_views(self, bufs) -> list:
        """``bufs`` (host copies of ``pack``'s arrays) as the views ``WordSlot.view``
        indexes: the word buffer viewed as each of ``view_dtypes``, in that
        order, then each separate leaf flattened."""
        words = bufs[0]
        return [words.view(d) for d in self.view_dtypes] + [b.reshape(-1) for b in bufs[1:]]

    def unpack_numpy(self, bufs):
        """The tree from host copies of ``pack``'s arrays (a sequence, in
        ``pack``'s order): every leaf a numpy view into them (writes into a view
        write into its buffer). Runs once per step in the shim, so the loop
        does as little as it can."""
        views = self.host_views(bufs)
        out = []
        append = out.append
        for view, lo, hi, shape in self._plan:
            x = views[view][lo:hi]
            append(x if shape is None else x.reshape(shape))
        return self.treedef.unflatten(out)
