"""``jaxecon reproduce``, timed: the whole protocol, then its wall time, CPU time and the machine's load.

    python benchmarks/reproduce.py --seeds 0 1 2 --out runs/protocol
    python benchmarks/reproduce.py --seeds 0 1 --out /tmp/p --phase1-episodes 3000 --phase2-episodes 3000
    python benchmarks/reproduce.py --evaluate-only runs/protocol   # time `jaxecon evaluate` of a protocol

Every option is ``jaxecon reproduce``'s (``jaxecon reproduce --help``).
After the run it prints the wall time, the process's CPU time (user + system,
``resource.getrusage``; JAX's threads included) and the load average before
and after (``os.getloadavg``): on a shared machine the wall time says little
without the load.
"""

from __future__ import annotations

import os
import resource
import sys
import time

from jaxecon.cli import main as jaxecon


def _cpu_s() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] == "--evaluate-only":
        command = ["evaluate"] + argv[1:]
    else:
        command = ["reproduce"] + argv
    load0, t0, c0 = os.getloadavg(), time.perf_counter(), _cpu_s()
    rc = jaxecon(command)
    wall, cpu, load1 = time.perf_counter() - t0, _cpu_s() - c0, os.getloadavg()
    print(f"jaxecon {command[0]}: {wall:.1f} s wall, {cpu:.1f} s CPU (user + system) on {os.cpu_count()} cores; "
          f"load average {load0[0]:.2f} before, {load1[0]:.2f} after (1 min)")
    return rc


if __name__ == "__main__":
    raise SystemExit(main())
