"""Where the command line writes: its JSON files (strict JSON: NaN and infinities
become null), and the checks of a ``--json FILE`` or ``--out DIR`` made before
any work, so that a path that cannot be written is refused in one line at
once rather than after minutes of work."""

from __future__ import annotations

import json
import math
import os
import pathlib

__all__ = ["check_json_file", "json_safe", "make_out_dir", "write_json"]


def check_json_file(path, flag: str = "--json", parents_made: bool = False) -> None:
    """Refuse a JSON output path that cannot be written, before any work.

    Args:
        parents_made: the command creates the file's directory (then only a
            file in its way is refused).
    Raises:
        ValueError: ``path`` is an existing directory, or its directory does
            not exist (unless ``parents_made``) or is a file; the message names
            ``flag``.
    """
    text = os.fspath(path)
    if os.path.isdir(text):
        raise ValueError(f"{flag} {text!r} is a directory; give a file path, e.g. "
                         f"{os.path.join(text, 'result.json')!r}")
    parent = os.path.dirname(os.path.abspath(text))
    while parents_made and not os.path.exists(parent) and os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
    if os.path.exists(parent) and not os.path.isdir(parent):
        raise ValueError(f"{flag} {text!r}: {parent!r} is a file, not a directory")
    if not os.path.isdir(parent):
        raise ValueError(f"{flag} {text!r}: its directory {parent!r} does not exist")


def make_out_dir(path, flag: str = "--out") -> pathlib.Path:
    """Create the output directory ``path`` (and its parents) before any work; returns it.

    Raises:
        ValueError: it cannot be made: ``path`` (or a parent) is a file, or no
            permission; the message names ``flag``.
    """
    out = pathlib.Path(path)
    if out.exists() and not out.is_dir():
        raise ValueError(f"{flag} {str(out)!r} is a file, not a directory")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:  # a file in the way, no permission, ...
        raise ValueError(f"{flag} {str(out)!r}: cannot create the output directory "
                         f"({exc.strerror or exc})") from None
    return out


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
