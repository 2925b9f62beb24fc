"""Writing the command line's JSON files (strict JSON: NaN and infinities become null)."""

from __future__ import annotations

import json
import math

__all__ = ["json_safe", "write_json"]


def json_safe(x):
    """``x`` with dict keys as strings, tuples as lists and non-finite floats as None."""
    if isinstance(x, dict):
        return {str(k): json_safe(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [json_safe(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return None
    return x


def write_json(path, obj) -> None:
    """Write ``json_safe(obj)`` to ``path`` (indented, one trailing newline).

    Raises:
        TypeError: a value JSON cannot hold (e.g. a numpy array).
        OSError: the file cannot be written.
    """
    with open(path, "w") as f:
        json.dump(json_safe(obj), f, indent=1, allow_nan=False)
        f.write("\n")
