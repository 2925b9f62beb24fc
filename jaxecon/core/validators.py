"""Validation helpers for Foundation-style keyword arguments.

Every check raises at construction time with the argument's name and the
allowed values, replacing Foundation's bare ``assert`` statements.
"""

from __future__ import annotations

import math
import numbers

import numpy as np


def check_int(name: str, value, minimum=None, maximum=None) -> int:
    """``value`` as an int, or ``ValueError`` naming ``name`` and the allowed range."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer, got {value!r}")
    if not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name} must be an integer, got {value!r}")
    value = int(value)
    _check_range(name, value, minimum, maximum)
    return value


def check_float(name: str, value, minimum=None, maximum=None) -> float:
    """``value`` as a finite float, or ``ValueError`` naming ``name`` and the allowed range."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} must be a number, got {value!r}")
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    _check_range(name, value, minimum, maximum)
    return value


def check_bool(name: str, value) -> bool:
    """``value`` as a bool (bools, numpy bools and 0/1 accepted), else ``ValueError``."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral) and value in (0, 1):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def check_choice(name: str, value, choices) -> str:
    """``str(value).lower()`` if it is one of ``choices``, else ``ValueError`` listing them."""
    v = str(value).lower()
    if v not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)}, got {value!r}")
    return v


def _check_range(name, value, minimum, maximum):
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    if maximum is not None and value > maximum:
        raise ValueError(f"{name} must be <= {maximum}, got {value!r}")
