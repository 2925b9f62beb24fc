"""``jaxecon view DENSE_LOG [--out FILE]``: the interactive replay page of a dense log.

Reads a dense log saved as JSON (``dense_log.json`` of ``jaxecon run``, the
shim's or Foundation's ``env.previous_episode_dense_log`` dumped with
``json.dump``) and writes ``jaxecon.plotting.replay``'s page: one
self-contained HTML file (open it in any browser; no server, no network).
By default the page goes beside the log, as ``replay.html``. Loads no JAX.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib

__all__ = ["add_arguments", "cmd_view"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``view`` arguments to ``parser``."""
    parser.add_argument("dense_log", metavar="DENSE_LOG",
                        help="a dense log as JSON (dense_log.json of jaxecon run, or a saved "
                             "env.previous_episode_dense_log)")
    parser.add_argument("--out", metavar="FILE", default=None,
                        help="the HTML file to write (default: replay.html beside DENSE_LOG)")
    parser.add_argument("--title", default=None, help="the page's title")


def cmd_view(args, parser) -> int:
    """``jaxecon view`` for parsed ``args``. Returns 0; a missing or malformed log
    exits through ``parser.error`` (one line, ``SystemExit(2)``)."""
    from jaxecon.plotting.replay import replay

    path = pathlib.Path(args.dense_log)
    if not path.is_file():
        parser.error(f"{str(path)!r} does not exist or is not a file")
    try:
        with open(path, encoding="utf-8") as f:
            log = json.load(f)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        parser.error(f"{str(path)!r} is not JSON ({exc})")
    try:
        page = replay(log, title=args.title)
    except ValueError as exc:
        parser.error(f"{str(path)!r} is not a dense log: {exc}")
    out = pathlib.Path(args.out) if args.out else path.with_name("replay.html")
    try:
        page.save(out)
    except OSError as exc:
        parser.error(f"--out {str(out)!r}: cannot write it ({exc.strerror or exc})")
    d = page.data
    print(f"wrote {out} ({os.path.getsize(out) / 1e6:.2f} MB; {d['T']} steps, {d['n']} agents): "
          "open it in a browser")
    return 0
