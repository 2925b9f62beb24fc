"""Array specs and time steps with TF-Agents' fields and checking rules, in numpy only.

TF-Agents (``tf_agents.specs.array_spec``, ``tf_agents.trajectories.time_step``)
describes what an environment returns with ``ArraySpec`` (shape, dtype,
name) and ``BoundedArraySpec`` (plus inclusive ``minimum``/``maximum``), and
returns ``TimeStep(step_type, reward, discount, observation)`` tuples whose
``step_type`` is a ``StepType``. This module rebuilds those four names, and
the nest helpers TF-Agents applies to them, without TensorFlow, so that
``jaxecon.interfaces.tf_agents`` works where TF-Agents is not installed.
The rules follow TF-Agents:

- ``ArraySpec.check_array(x)``: ``x`` is a numpy array of exactly the spec's
  shape and dtype, or a Python/numpy number when the shape is ``()`` and
  the number's type is the dtype; lists and tuples are rejected.
- ``BoundedArraySpec``: bounds broadcast to the shape and are stored as
  read-only arrays of the spec's dtype; a missing bound, and an infinite
  float bound, becomes the dtype's extreme finite value; bounds outside the
  dtype's range, or a minimum above the maximum, are a ``ValueError``.
  ``check_array`` also requires ``minimum <= x <= maximum`` elementwise.
- Two specs are equal when shape and dtype (and the bounds, for bounded
  specs) are; names are ignored.

Nests are dicts, lists, tuples and namedtuples of specs (``jax.tree_util``
structures).
"""

from __future__ import annotations

import numbers
from typing import Any, NamedTuple

import jax
import numpy as np

__all__ = [
    "ArraySpec", "BoundedArraySpec", "StepType", "TimeStep",
    "add_outer_dims_nest", "check_arrays_nest", "is_bounded", "is_continuous",
    "is_discrete", "sample_spec_nest",
]


def _dtype_range(dtype: np.dtype) -> tuple:
    """The smallest and largest finite values of ``dtype`` (bool: 0 and 1)."""
    if dtype == np.bool_:
        return 0, 1
    if np.issubdtype(dtype, np.floating):
        info = np.finfo(dtype)
        return info.min, info.max
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return info.min, info.max
    raise TypeError(f"dtype must be a bool, integer or floating numpy dtype, got {dtype}")


class ArraySpec:
    """The shape and dtype of a numpy array (TF-Agents' ``ArraySpec``).

    Args:
        shape: iterable of ints, e.g. ``(4, 50)``; ``()`` for a scalar.
        dtype: numpy dtype or its name.
        name: optional label, e.g. ``"a/action_mask"``.
    Raises:
        TypeError: ``shape`` is not iterable or ``dtype`` is not a numpy dtype.
    """

    __hash__ = None
    __slots__ = ("_shape", "_dtype", "_name")

    def __init__(self, shape, dtype, name: str | None = None):
        self._shape = tuple(int(d) for d in shape)
        self._dtype = np.dtype(dtype)
        self._name = name

    @property
    def shape(self) -> tuple:
        """The array shape (a tuple of ints)."""
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        """The numpy dtype."""
        return self._dtype

    @property
    def name(self) -> str | None:
        """The label given at construction."""
        return self._name

    def __repr__(self) -> str:
        return f"ArraySpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r})"

    def __eq__(self, other) -> bool:
        return (isinstance(other, ArraySpec) and self.shape == other.shape
                and self.dtype == other.dtype)

    def __ne__(self, other) -> bool:
        return not self == other

    def __reduce__(self):
        return ArraySpec, (self.shape, self.dtype, self.name)

    def check_array(self, array) -> bool:
        """Whether ``array`` conforms: a numpy array of this shape and dtype,
        or a number of this dtype when the shape is ``()``."""
        if isinstance(array, np.ndarray):
            return array.shape == self.shape and array.dtype == self.dtype
        if isinstance(array, numbers.Number):
            return self.shape == () and np.dtype(type(array)) == self.dtype
        return False

    @staticmethod
    def from_array(array, name: str | None = None) -> "ArraySpec":
        """The spec of a numpy array or number.

        Raises:
            ValueError: ``array`` is neither.
        """
        if isinstance(array, np.ndarray):
            return ArraySpec(array.shape, array.dtype, name)
        if isinstance(array, numbers.Number):
            return ArraySpec((), type(array), name)
        raise ValueError(f"array must be a numpy array or a number, got {array!r}")

    @staticmethod
    def from_spec(spec) -> "ArraySpec":
        """An unbounded ``ArraySpec`` with ``spec``'s shape, dtype and name."""
        return ArraySpec(spec.shape, spec.dtype, spec.name)

    def replace(self, shape=None, dtype=None, name=None) -> "ArraySpec":
        """A copy with the given fields changed."""
        return ArraySpec(self.shape if shape is None else shape,
                         self.dtype if dtype is None else dtype,
                         self.name if name is None else name)


class BoundedArraySpec(ArraySpec):
    """An ``ArraySpec`` with inclusive elementwise bounds (TF-Agents' ``BoundedArraySpec``).

    Args:
        shape, dtype, name: as ``ArraySpec``.
        minimum, maximum: numbers or arrays broadcastable to ``shape``;
            None means the dtype's extreme value; infinite float bounds
            become the dtype's extreme finite values.
    Raises:
        ValueError: a bound does not broadcast to ``shape``, lies outside
            the dtype's range, or ``minimum > maximum`` somewhere.
    """

    __hash__ = None
    __slots__ = ("_minimum", "_maximum")

    def __init__(self, shape, dtype, minimum=None, maximum=None, name: str | None = None):
        super().__init__(shape, dtype, name)
        low, high = _dtype_range(self.dtype)
        bounds = []
        for label, value, default in (("minimum", minimum, low), ("maximum", maximum, high)):
            try:
                np.broadcast_to(value, self.shape)
            except ValueError as exc:
                raise ValueError(f"{label} is not compatible with shape {self.shape}: {exc}") from None
            b = np.array(default if value is None else value, dtype=np.float64
                         if np.issubdtype(self.dtype, np.floating) else None)
            if np.issubdtype(self.dtype, np.floating):
                b = np.where(b == -np.inf, low, np.where(b == np.inf, high, b))
            bounds.append(b)
        lo, hi = bounds
        if np.any(lo > hi):
            raise ValueError(f"minimum {lo} is greater than maximum {hi} somewhere")
        if np.any(lo < low) or np.any(hi > high):
            raise ValueError(
                f"bounds [{lo}, {hi}] are not within the range [{low}, {high}] of dtype {self.dtype}"
            )
        self._minimum = lo.astype(self.dtype)
        self._minimum.setflags(write=False)
        self._maximum = hi.astype(self.dtype)
        self._maximum.setflags(write=False)

    @classmethod
    def from_spec(cls, spec, name: str | None = None) -> "BoundedArraySpec":
        """A bounded copy of ``spec`` (an unbounded one gets the dtype's range)."""
        name = spec.name if name is None else name
        if is_bounded(spec):
            return BoundedArraySpec(spec.shape, spec.dtype, spec.minimum, spec.maximum, name)
        return BoundedArraySpec(spec.shape, spec.dtype, name=name)

    @property
    def minimum(self) -> np.ndarray:
        """Read-only array of the lower bounds (inclusive)."""
        return self._minimum

    @property
    def maximum(self) -> np.ndarray:
        """Read-only array of the upper bounds (inclusive)."""
        return self._maximum

    @property
    def num_values(self):
        """For an integer spec, the number of allowed values per element (an array); else None."""
        if is_discrete(self):
            return (np.broadcast_to(self.maximum, self.shape)
                    - np.broadcast_to(self.minimum, self.shape) + 1)
        return None

    def __repr__(self) -> str:
        return (f"BoundedArraySpec(shape={self.shape}, dtype={self.dtype!r}, name={self.name!r}, "
                f"minimum={self.minimum}, maximum={self.maximum})")

    def __eq__(self, other) -> bool:
        return (isinstance(other, BoundedArraySpec) and super().__eq__(other)
                and bool(np.all(self.minimum == other.minimum))
                and bool(np.all(self.maximum == other.maximum)))

    def __reduce__(self):
        return BoundedArraySpec, (self.shape, self.dtype, self.minimum, self.maximum, self.name)

    def check_array(self, array) -> bool:
        """``ArraySpec.check_array`` and every element within ``[minimum, maximum]``."""
        return (super().check_array(array) and bool(np.all(array >= self.minimum))
                and bool(np.all(array <= self.maximum)))

    def replace(self, shape=None, dtype=None, minimum=None, maximum=None, name=None):
        """A copy with the given fields changed."""
        return BoundedArraySpec(
            self.shape if shape is None else shape, self.dtype if dtype is None else dtype,
            self.minimum if minimum is None else minimum,
            self.maximum if maximum is None else maximum, self.name if name is None else name)


def is_bounded(spec) -> bool:
    """Whether ``spec`` has bounds (a ``BoundedArraySpec``, or one of TF-Agents')."""
    return hasattr(spec, "minimum") and hasattr(spec, "maximum")


def is_discrete(spec) -> bool:
    """Whether ``spec``'s dtype is an integer dtype."""
    return np.issubdtype(spec.dtype, np.integer)


def is_continuous(spec) -> bool:
    """Whether ``spec``'s dtype is a floating dtype."""
    return np.issubdtype(spec.dtype, np.floating)


class StepType:
    """Where a ``TimeStep`` lies in an episode: int32 0-d arrays ``FIRST`` (0),
    ``MID`` (1), ``LAST`` (2). ``StepType(v)`` returns the constant equal to ``v``
    (``ValueError`` otherwise)."""

    FIRST = np.asarray(0, dtype=np.int32)
    MID = np.asarray(1, dtype=np.int32)
    LAST = np.asarray(2, dtype=np.int32)

    def __new__(cls, value):
        for constant in (cls.FIRST, cls.MID, cls.LAST):
            if value == constant:
                return constant
        raise ValueError(f"no StepType equals {value!r}; allowed: 0 (FIRST), 1 (MID), 2 (LAST)")


class TimeStep(NamedTuple):
    """What ``reset`` and ``step`` return (TF-Agents' ``TimeStep``).

    Attributes:
        step_type: ``StepType`` value(s), int32 (``[B]`` for a batched env).
        reward: reward(s), a nest of float32 arrays.
        discount: discount(s) in ``[0, 1]``, a nest of float32 arrays.
        observation: a nest of numpy arrays matching the observation spec.
    """

    step_type: Any
    reward: Any
    discount: Any
    observation: Any

    def is_first(self):
        """bool (array): ``step_type == FIRST``."""
        return np.equal(self.step_type, StepType.FIRST)

    def is_mid(self):
        """bool (array): ``step_type == MID``."""
        return np.equal(self.step_type, StepType.MID)

    def is_last(self):
        """bool (array): ``step_type == LAST``."""
        return np.equal(self.step_type, StepType.LAST)


def _is_spec(x) -> bool:
    return isinstance(x, ArraySpec) or (hasattr(x, "shape") and hasattr(x, "dtype")
                                        and hasattr(x, "check_array"))


def add_outer_dims_nest(structure, outer_dims: tuple):
    """Every spec of the nest with ``outer_dims`` prepended to its shape (bounds kept)."""
    outer = tuple(outer_dims)

    def add(spec):
        if is_bounded(spec):
            return BoundedArraySpec(outer + spec.shape, spec.dtype,
                                    np.broadcast_to(spec.minimum, outer + spec.shape),
                                    np.broadcast_to(spec.maximum, outer + spec.shape), spec.name)
        return ArraySpec(outer + spec.shape, spec.dtype, spec.name)

    return jax.tree.map(add, structure, is_leaf=_is_spec)


def check_arrays_nest(arrays, spec) -> bool:
    """Whether ``arrays`` has ``spec``'s nest structure and every array passes
    its spec's ``check_array``."""
    spec_leaves, spec_def = jax.tree.flatten(spec, is_leaf=_is_spec)
    array_leaves, array_def = jax.tree.flatten(arrays)
    if array_def != spec_def:
        return False
    return all(s.check_array(a) for s, a in zip(spec_leaves, array_leaves))


def sample_spec_nest(structure, rng: np.random.Generator, outer_dims: tuple = ()):
    """Uniform random arrays for a nest of specs (TF-Agents' ``sample_spec_nest``).

    Integer specs: uniform over ``[minimum, maximum]``; float specs: uniform
    in ``[minimum, maximum)`` (an unbounded spec uses the dtype's range,
    halved for float64 so that the interval is finite); bool: 0/1.

    Args:
        structure: a spec or nest of specs.
        rng: ``np.random.Generator``.
        outer_dims: shape prepended to every sample (e.g. ``(batch_size,)``).
    """
    outer = tuple(outer_dims)

    def sample(spec):
        spec = BoundedArraySpec.from_spec(spec)
        shape = outer + spec.shape
        low = np.broadcast_to(spec.minimum, shape)
        high = np.broadcast_to(spec.maximum, shape)
        if is_continuous(spec):
            lo, hi = low.astype(np.float64), high.astype(np.float64)
            if np.any(np.isinf(hi - lo)):
                lo, hi = lo / 2, hi / 2
            return rng.uniform(lo, hi, size=shape).astype(spec.dtype)
        values = rng.integers(low.astype(np.int64), high.astype(np.int64), size=shape,
                              endpoint=True)
        return values.astype(spec.dtype)

    return jax.tree.map(sample, structure, is_leaf=_is_spec)
