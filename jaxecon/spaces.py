"""Observation and action spaces: ``Box``, ``Discrete``, ``MultiDiscrete``, ``Dict``.

Shaped like gymnax's spaces (``gymnax.environments.spaces``: the attributes
``low``, ``high``, ``shape``, ``dtype``, ``n``, ``spaces`` and the methods
``sample(key)`` and ``contains(x)``), written in pure JAX and numpy so that
they need no optional library. ``contains`` and ``sample`` are jittable:
the static structure (shapes, dtypes, keys) is checked in Python, the values
with ``jax.numpy``, and the result is a bool jax array.

The environment builds them from its static configuration
(``jaxecon.core.env.Economy.observation_space`` and
``action_space``); see ``docs/spaces.md`` for every field's bounds.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["ROUNDING_SLACK", "Box", "Dict", "Discrete", "MultiDiscrete", "Space", "concatenate", "stack"]

#: Relative widening (``Box.widen``) of the bounds of a quantity computed in
#: floating point, such as a ratio or a mean: XLA may round its last bit away
#: from the exact value (e.g. 14 / 15 observed one float32 ulp above
#: ``float32(14 / 15)``), so an attained exact bound needs a margin.
ROUNDING_SLACK = 1e-6


class Space:
    """Base class of the spaces: ``sample(key)`` and ``contains(x)``."""

    shape: tuple = ()
    dtype: np.dtype = np.dtype(np.float32)

    def sample(self, key: jax.Array):
        """A random element of the space (jittable)."""
        raise NotImplementedError

    def contains(self, x) -> jax.Array:
        """bool []: whether ``x`` lies in the space (jittable)."""
        raise NotImplementedError


def _shape(shape, what: str) -> tuple:
    try:
        out = tuple(int(s) for s in shape)
    except TypeError:
        raise ValueError(f"{what}: shape must be a tuple of ints >= 0, got {shape!r}") from None
    if any(s < 0 for s in out):
        raise ValueError(f"{what}: shape must be a tuple of ints >= 0, got {shape!r}")
    return out


def _dtype(dtype, what: str) -> np.dtype:
    try:
        out = np.dtype(dtype)
    except TypeError:
        raise ValueError(f"{what}: dtype must be a numpy/jax bool, integer or float dtype, got {dtype!r}") from None
    if not (jnp.issubdtype(out, jnp.floating) or np.issubdtype(out, np.integer) or out == np.bool_):
        raise ValueError(f"{what}: dtype must be a bool, integer or float dtype, got {out}")
    return out


def _false() -> jax.Array:
    return jnp.zeros((), bool)


class Box(Space):
    """An array of ``shape`` whose every element lies in ``[low, high]``.

    Args:
        low: scalar or array broadcastable to ``shape``: elementwise lower
            bounds (``-np.inf`` = unbounded below; float dtypes only).
        high: same, upper bounds (``np.inf`` = unbounded above).
        shape: tuple of ints; None -> the broadcast shape of ``low`` and ``high``.
        dtype: bool, integer or float dtype of the elements (float32).

    Attributes:
        low, high: numpy arrays of ``shape`` and ``dtype``.
        shape: tuple of ints. dtype: numpy dtype.

    Raises:
        ValueError: ``low``/``high`` not broadcastable to ``shape``, NaN
            bounds, ``low > high`` somewhere, infinite bounds for an integer
            or bool dtype, or an unsupported dtype.
    """

    def __init__(self, low, high, shape=None, dtype=np.float32):
        self.dtype = _dtype(dtype, "Box")
        low_a, high_a = np.asarray(low, np.float64), np.asarray(high, np.float64)
        if shape is None:
            try:
                shape = np.broadcast_shapes(low_a.shape, high_a.shape)
            except ValueError:
                raise ValueError(f"Box: low {low_a.shape} and high {high_a.shape} do not broadcast") from None
        self.shape = _shape(shape, "Box")
        try:
            low_a = np.broadcast_to(low_a, self.shape).copy()
            high_a = np.broadcast_to(high_a, self.shape).copy()
        except ValueError:
            raise ValueError(
                f"Box: low (shape {low_a.shape}) and high (shape {high_a.shape}) must broadcast "
                f"to shape {self.shape}"
            ) from None
        if np.isnan(low_a).any() or np.isnan(high_a).any():
            raise ValueError("Box: low and high must not be NaN")
        if (low_a > high_a).any():
            raise ValueError(f"Box: low must be <= high everywhere, got low={low_a} high={high_a}")
        if not jnp.issubdtype(self.dtype, jnp.floating):
            if not (np.isfinite(low_a).all() and np.isfinite(high_a).all()):
                raise ValueError(f"Box: an {self.dtype} Box needs finite low and high")
            info = np.iinfo(self.dtype) if self.dtype != np.bool_ else None
            if info is not None and ((low_a < info.min).any() or (high_a > info.max).any()):
                raise ValueError(f"Box: bounds outside the range of {self.dtype}")
        self.low, self.high = low_a.astype(self.dtype), high_a.astype(self.dtype)

    @property
    def bounded(self) -> np.ndarray:
        """bool [*shape]: elements with finite ``low`` and ``high``."""
        return np.isfinite(self.low) & np.isfinite(self.high)

    def widen(self, rel: float = ROUNDING_SLACK, abs: float = 0.0) -> "Box":
        """A float ``Box`` with every finite bound moved outwards by ``rel`` x
        |bound| + ``abs`` (a zero bound stays exact unless ``abs`` > 0): the
        space of a quantity whose exact bounds floating-point rounding may
        overstep (``ROUNDING_SLACK``).

        Raises:
            ValueError: an integer or bool Box, or negative ``rel``/``abs``.
        """
        if not np.issubdtype(self.dtype, np.floating):
            raise ValueError(f"Box.widen: only float Boxes have rounding, this one is {self.dtype}")
        if rel < 0 or abs < 0:
            raise ValueError(f"Box.widen: rel and abs must be >= 0, got {rel}, {abs}")
        low, high = self.low.astype(np.float64), self.high.astype(np.float64)
        with np.errstate(invalid="ignore"):
            low = np.where(np.isfinite(low), low - rel * np.abs(low) - abs, low)
            high = np.where(np.isfinite(high), high + rel * np.abs(high) + abs, high)
        return Box(low, high, self.shape, self.dtype)

    def contains(self, x) -> jax.Array:
        """bool []: ``x`` has ``shape``, every element lies in [low, high] (NaN
        never does) and, for an integer or bool Box, is a whole number.
        A wrong shape is False without looking at the values."""
        x = jnp.asarray(x)
        if tuple(x.shape) != self.shape:
            return _false()
        ok = jnp.all((x >= self.low) & (x <= self.high))
        if not jnp.issubdtype(self.dtype, jnp.floating) and jnp.issubdtype(x.dtype, jnp.floating):
            ok = ok & jnp.all(x == jnp.round(x))
        return ok

    def sample(self, key: jax.Array) -> jax.Array:
        """An array of ``shape`` and ``dtype``: uniform where both bounds are
        finite (integers: uniform over low..high inclusive, within the range
        of JAX's default int: without x64 values above the int32 maximum, and
        that maximum itself, are never drawn), ``low`` +
        Exponential(1) where only ``low`` is, ``high`` - Exponential(1) where
        only ``high`` is, Normal(0, 1) where neither (as gymnasium's Box)."""
        if not jnp.issubdtype(self.dtype, jnp.floating):
            if self.dtype == np.bool_:
                return jax.random.bernoulli(key, 0.5, self.shape) & jnp.asarray(self.high) | jnp.asarray(self.low)
            # randint's exclusive maxval = high + 1 (it takes a wider dtype for
            # high = the dtype's maximum; without x64 int32 is the widest).
            wide = jnp.result_type(int)  # int64 under x64, else int32
            info = np.iinfo(wide)
            minval = np.clip(self.low.astype(np.float64), info.min, info.max).astype(wide)
            maxval = np.clip(self.high.astype(np.float64) + 1, info.min, info.max).astype(wide)
            return jax.random.randint(key, self.shape, minval, maxval, dtype=self.dtype)
        k_u, k_e, k_n = jax.random.split(key, 3)
        lo_f, hi_f = np.isfinite(self.low), np.isfinite(self.high)
        lo = np.where(lo_f, self.low, 0.0)
        hi = np.where(hi_f, self.high, 0.0)
        u = jax.random.uniform(k_u, self.shape, minval=lo, maxval=hi)
        e = jax.random.exponential(k_e, self.shape)
        nrm = jax.random.normal(k_n, self.shape)
        out = jnp.where(lo_f & hi_f, u, jnp.where(lo_f, lo + e, jnp.where(hi_f, hi - e, nrm)))
        # Rounding to a narrower dtype must not leave the bounds.
        return jnp.clip(out.astype(self.dtype), self.low, self.high)

    def __eq__(self, other):
        return (
            isinstance(other, Box)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and np.array_equal(self.low, other.low)
            and np.array_equal(self.high, other.high)
        )

    __hash__ = None

    def __repr__(self) -> str:
        def bound(b):
            flat = np.unique(b)
            return f"{flat[0]:g}" if flat.size == 1 else f"[{flat.min():g}..{flat.max():g}]"

        lo = bound(self.low) if self.low.size else "-"
        hi = bound(self.high) if self.high.size else "-"
        return f"Box(low={lo}, high={hi}, shape={self.shape}, dtype={self.dtype.name})"


class Discrete(Space):
    """The integers ``0 .. n - 1`` (a scalar action).

    Args:
        n: int >= 1, number of values.

    Attributes:
        n: int. shape: ``()``. dtype: int32.

    Raises:
        ValueError: ``n`` not an int >= 1.
    """

    def __init__(self, n):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
            raise ValueError(f"Discrete: n must be an int >= 1, got {n!r}")
        self.n = int(n)
        self.shape = ()
        self.dtype = np.dtype(np.int32)

    def contains(self, x) -> jax.Array:
        """bool []: ``x`` is a scalar whole number in [0, n)."""
        x = jnp.asarray(x)
        if x.shape != ():
            return _false()
        return (x >= 0) & (x < self.n) & (x == jnp.round(x) if jnp.issubdtype(x.dtype, jnp.floating) else True)

    def sample(self, key: jax.Array) -> jax.Array:
        """int32 []: uniform over 0 .. n - 1."""
        return jax.random.randint(key, (), 0, self.n, dtype=jnp.int32)

    def __eq__(self, other):
        return isinstance(other, Discrete) and self.n == other.n

    __hash__ = None

    def __repr__(self) -> str:
        return f"Discrete({self.n})"


class MultiDiscrete(Space):
    """A vector whose element ``k`` is an integer in ``0 .. nvec[k] - 1``
    (one action per head, e.g. the planner's tax brackets).

    Args:
        nvec: 1-D sequence of ints >= 1.

    Attributes:
        nvec: int32 numpy array [K]. shape: ``(K,)``. dtype: int32.

    Raises:
        ValueError: ``nvec`` not a non-empty 1-D sequence of ints >= 1.
    """

    def __init__(self, nvec):
        arr = np.asarray(nvec)
        if arr.ndim != 1 or arr.size == 0 or not np.issubdtype(arr.dtype, np.integer) or (arr < 1).any():
            raise ValueError(f"MultiDiscrete: nvec must be a non-empty 1-D sequence of ints >= 1, got {nvec!r}")
        self.nvec = arr.astype(np.int32)
        self.shape = (int(arr.size),)
        self.dtype = np.dtype(np.int32)

    def contains(self, x) -> jax.Array:
        """bool []: ``x`` has shape ``(K,)`` and ``0 <= x[k] < nvec[k]`` (whole numbers)."""
        x = jnp.asarray(x)
        if tuple(x.shape) != self.shape:
            return _false()
        ok = jnp.all((x >= 0) & (x < self.nvec))
        if jnp.issubdtype(x.dtype, jnp.floating):
            ok = ok & jnp.all(x == jnp.round(x))
        return ok

    def sample(self, key: jax.Array) -> jax.Array:
        """int32 [K]: each head uniform over its values, independently."""
        u = jax.random.uniform(key, self.shape)
        return jnp.minimum(jnp.floor(u * self.nvec), self.nvec - 1).astype(jnp.int32)

    def __eq__(self, other):
        return isinstance(other, MultiDiscrete) and np.array_equal(self.nvec, other.nvec)

    __hash__ = None

    def __repr__(self) -> str:
        return f"MultiDiscrete({self.nvec.tolist()})"


class Dict(Space):
    """A mapping of names to spaces (an observation with several fields).

    Args:
        spaces: mapping ``{name (str): Space}``; the order is kept.

    Attributes:
        spaces: ``OrderedDict`` name -> space.

    Raises:
        ValueError: ``spaces`` not a mapping of str to ``Space``.
    """

    def __init__(self, spaces):
        if not isinstance(spaces, Mapping):
            raise ValueError(f"Dict: spaces must be a mapping of name -> Space, got {type(spaces).__name__}")
        for k, v in spaces.items():
            if not isinstance(k, str) or not isinstance(v, Space):
                raise ValueError(f"Dict: spaces must map str to Space, got {k!r}: {type(v).__name__}")
        self.spaces = OrderedDict(spaces)

    def __getitem__(self, name: str) -> Space:
        return self.spaces[name]

    def __contains__(self, name) -> bool:
        return name in self.spaces

    def __len__(self) -> int:
        return len(self.spaces)

    def keys(self):
        """The field names, in order."""
        return self.spaces.keys()

    def items(self):
        """``(name, space)`` pairs, in order."""
        return self.spaces.items()

    def contains(self, x) -> jax.Array:
        """bool []: ``x`` is a mapping with exactly these keys and every entry
        lies in its space."""
        if not isinstance(x, Mapping) or set(x) != set(self.spaces):
            return _false()
        ok = jnp.ones((), bool)
        for k, space in self.spaces.items():
            ok = ok & space.contains(x[k])
        return ok

    def sample(self, key: jax.Array) -> dict:
        """``{name: sample}``, one independent key per entry."""
        keys = jax.random.split(key, max(1, len(self.spaces)))
        return {k: s.sample(keys[i]) for i, (k, s) in enumerate(self.spaces.items())}

    def __eq__(self, other):
        return (
            isinstance(other, Dict)
            and list(self.spaces) == list(other.spaces)
            and all(self.spaces[k] == other.spaces[k] for k in self.spaces)
        )

    __hash__ = None

    def __repr__(self) -> str:
        inner = ", ".join(f"{k!r}: {v!r}" for k, v in self.spaces.items())
        return f"Dict({{{inner}}})"


def concatenate(boxes, dtype=np.float32) -> Box:
    """One 1-D ``Box`` of ``dtype``: the boxes flattened and concatenated in order
    (their bounds too), as an observation packer concatenates arrays.

    Raises:
        ValueError: an entry that is not a ``Box``.
    """
    boxes = list(boxes)
    for b in boxes:
        if not isinstance(b, Box):
            raise ValueError(f"concatenate: every entry must be a Box, got {type(b).__name__}")
    if not boxes:
        return Box(np.zeros(0), np.zeros(0), (0,), dtype)
    low = np.concatenate([b.low.astype(np.float64).reshape(-1) for b in boxes])
    high = np.concatenate([b.high.astype(np.float64).reshape(-1) for b in boxes])
    return Box(low, high, low.shape, dtype)


def stack(box: Box, n: int) -> Box:
    """A ``Box`` of ``n`` rows of ``box``: shape ``(n,) + box.shape``, each row
    with ``box``'s bounds and dtype (e.g. the planner's view of every mobile
    agent, one row per agent)."""
    shape = (int(n),) + box.shape
    return Box(np.broadcast_to(box.low, shape), np.broadcast_to(box.high, shape), shape, box.dtype)
