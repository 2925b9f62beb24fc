"""The allowed values of each numeric parameter: one table, declared beside each Params field.

A parameter dataclass (``BuildParams``, ``WoodAndStoneParams``, ...) declares
the range of a field with ``bounded(default, minimum=..., maximum=...)``: a
``flax.struct`` field whose metadata holds a :class:`Bound`. A field that
declares none (``FINITE``) only has to be finite. Every check of a parameter
reads this table:

- ``jaxecon.make``: a constructor checks its keyword argument with the
  field's bound, ``bound_of(BuildParams, "payment").check_int("Build.payment",
  payment)``;
- ``jaxecon.validate_params`` and ``BaseEnvironment.checked_step``, every
  leaf of ``EnvParams`` (``jaxecon.core.param_checks``);
- ``jaxecon.analysis.set_param`` and ``make_sweep``, the values they put in.

A bound on a field holding a dict or an array (``regen_weight``,
``fixed_rates``) applies to each of its entries. Rules between fields (e.g.
``rate_min <= rate_max``) stay in the constructors.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from flax import struct

from jaxecon.core import validators

__all__ = ["BOUND_KEY", "FINITE", "Bound", "bound_of", "bounded", "field_bound"]

#: The key of a field's metadata that holds its :class:`Bound`.
BOUND_KEY = "jaxecon_bound"


@dataclasses.dataclass(frozen=True)
class Bound:
    """The allowed values of one parameter: finite numbers from ``minimum`` to ``maximum``.

    Attributes:
        minimum: the lowest allowed value, or None for no lower limit.
        maximum: the highest allowed value, or None for no upper limit.
        minimum_open: ``minimum`` itself is not allowed (``> minimum``).
        maximum_open: ``maximum`` itself is not allowed (``< maximum``).
    """

    minimum: float | None = None
    maximum: float | None = None
    minimum_open: bool = False
    maximum_open: bool = False

    def describe(self) -> str:
        """The allowed values in words, e.g. ``"a finite number in [0, 1]"``, ``"a finite number > 0"``."""
        lo, hi = self.minimum, self.maximum
        if lo is not None and hi is not None:
            return (f"a finite number in {'(' if self.minimum_open else '['}{_num(lo)}, "
                    f"{_num(hi)}{')' if self.maximum_open else ']'}")
        if lo is not None:
            return f"a finite number {'>' if self.minimum_open else '>='} {_num(lo)}"
        if hi is not None:
            return f"a finite number {'<' if self.maximum_open else '<='} {_num(hi)}"
        return "a finite number"

    def below(self, x):
        """Elementwise: ``x`` lies under the lower limit (NaN does not). ``x``: a numpy or
        JAX array (or number); returns bool of its shape."""
        if self.minimum is None:
            return x < -math.inf  # all False, of x's shape and kind
        return x <= self.minimum if self.minimum_open else x < self.minimum

    def above(self, x):
        """Elementwise: ``x`` lies over the upper limit (NaN does not); as ``below``."""
        if self.maximum is None:
            return x > math.inf  # all False, of x's shape and kind
        return x >= self.maximum if self.maximum_open else x > self.maximum

    def check_float(self, name: str, value) -> float:
        """A constructor's keyword ``value`` as a float within the bound.

        Raises:
            ValueError: ``value`` is not a finite number within the bound; names
                ``name`` and the allowed values.
        """
        out = validators.check_float(name, value)
        self._check(name, out, value)
        return out

    def check_int(self, name: str, value) -> int:
        """A constructor's keyword ``value`` as an int within the bound.

        Raises:
            ValueError: ``value`` is not an integer within the bound; names
                ``name`` and the allowed values.
        """
        out = validators.check_int(name, value)
        self._check(name, out, value)
        return out

    def _check(self, name: str, number, value) -> None:
        if self.below(number) or self.above(number):
            raise ValueError(f"{name} must be {self.describe()}, got {value!r}")


#: The bound of a field that declares none: any finite number.
FINITE = Bound()


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


def bounded(default: Any = dataclasses.MISSING, *, minimum: float | None = None,
            maximum: float | None = None, minimum_open: bool = False, maximum_open: bool = False,
            default_factory: Any = dataclasses.MISSING):
    """A ``flax.struct`` (pytree) field of a Params dataclass with its :class:`Bound`.

    Use as ``payment: float = bounded(10.0, minimum=0)``; give ``default`` or
    ``default_factory`` as for ``dataclasses.field``.
    """
    bound = Bound(minimum, maximum, minimum_open, maximum_open)
    return struct.field(default=default, default_factory=default_factory, metadata={BOUND_KEY: bound})


def bound_of(params_cls: type, field: str) -> Bound:
    """The :class:`Bound` that ``params_cls`` (a Params dataclass) declares for ``field``
    (``FINITE`` if it declares none).

    Raises:
        KeyError: ``params_cls`` has no such field; the message lists its fields.
    """
    fields = {f.name: f for f in dataclasses.fields(params_cls)}
    if field not in fields:
        raise KeyError(f"{params_cls.__name__} has no field {field!r}; fields: {sorted(fields)}")
    return field_bound(fields[field])


def field_bound(field: dataclasses.Field) -> Bound:
    """The :class:`Bound` in ``field``'s metadata, or ``FINITE``."""
    return field.metadata.get(BOUND_KEY, FINITE)
