"""Say what is being compiled, show it progressing, say how long it took.

XLA compiles a jaxecon program in seconds to a minute on a CPU, during which
a process prints nothing by itself. Every command (``jaxecon run``,
``bench``, ``train``, ``evaluate``, ``reproduce``) and the Foundation shim's
first environment of an economy wrap their compiles in a ``CompileNotice``:

- when it starts (or, with ``announce_after_s``, once it has run that long):
  ``compiling <what> ...``;
- while it runs: on a terminal, a spinner with the elapsed seconds on
  stderr (a tqdm line, removed at the end); elsewhere (a log file, a
  notebook's captured output), ``still compiling <what>: N s`` at 10, 30 and
  60 s and every minute after;
- when it ends: ``compiled <what> in N s``, with how many of its programs JAX's
  persistent compilation cache supplied when it supplied some
  (``jaxecon.compilation_cache``; counted from ``jax.monitoring``'s
  ``/jax/compilation_cache/cache_hits`` events).

A compile past 2 minutes makes XLA print, on its own, a banner into the
middle of the spinner ("Very slow compile? If you want to file a bug, run
with envvar XLA_FLAGS=--xla_dump_to=/tmp/foo and attach the results."). It
cannot be caught without taking over the process's stderr, which would hide
XLA's fatal errors in a crash, so a notice says once per process, just before
that mark (``XLA_BANNER_NOTE_S``), what the banner means (``XLA_BANNER_NOTE``):
only that the compile is long, nothing to report.

The lines go to ``log`` (``print`` by default; None: silent, the timing still
kept). A notice is a context manager, or ``start()`` and ``finish()`` for a
compile that ends elsewhere (the shim compiles in background threads).
"""

from __future__ import annotations

import sys
import threading
import time
from typing import Callable, Optional

import jax

__all__ = ["CompileNotice", "XLA_BANNER_NOTE", "XLA_BANNER_NOTE_S", "cache_hits", "still_compiling_marks"]

_CACHE_HIT_EVENT = "/jax/compilation_cache/cache_hits"
_COMPILE_REQUEST_EVENT = "/jax/compilation_cache/compile_requests_use_cache"
_SPINNER = "|/-\\"
#: Seconds between the spinner's frames on a terminal.
SPINNER_INTERVAL_S = 0.2

#: Elapsed seconds of a notice at which it explains XLA's slow-compile banner
#: (once per process): just before XLA's own mark, 2 minutes into a compile.
XLA_BANNER_NOTE_S = 110.0
#: What a notice says of XLA's banner.
XLA_BANNER_NOTE = ("note: a compile past 2 minutes makes XLA print a banner \"Very slow compile? If you want to "
                   "file a bug, run with envvar XLA_FLAGS=...\". It means only that the compile is long (a big "
                   "program, a slow or busy CPU), not that anything is wrong: nothing needs reporting, and the "
                   "compile goes on")

_banner_explained = threading.Event()

_counts = {_CACHE_HIT_EVENT: 0, _COMPILE_REQUEST_EVENT: 0}
_counts_lock = threading.Lock()
_listening = False


def _on_event(event: str, **_kwargs) -> None:
    if event in _counts:
        with _counts_lock:
            _counts[event] += 1


def cache_hits() -> tuple[int, int]:
    """``(hits, requests)``: the process's compiles that JAX's persistent cache
    supplied, and those that asked it, since the first notice was made."""
    with _counts_lock:
        return _counts[_CACHE_HIT_EVENT], _counts[_COMPILE_REQUEST_EVENT]


def _listen() -> None:
    global _listening
    with _counts_lock:
        if _listening:
            return
        _listening = True
    jax.monitoring.register_event_listener(_on_event)


def still_compiling_marks():
    """The elapsed seconds at which a notice off a terminal says it is still
    compiling: 10, 30, 60, then every 60."""
    yield from (10.0, 30.0)
    t = 60.0
    while True:
        yield t
        t += 60.0


class CompileNotice:
    """The progress of one compile (module docstring).

    Args:
        what: what is compiled, as the lines name it (e.g. ``"the step scan
            (1000 steps)"``).
        log: called with each line; None: no lines.
        announce_after_s: say nothing until the compile has run this long
            (0: at once); a compile that ends sooner prints nothing.
        stream: where the spinner goes (default ``sys.stderr``); the spinner
            is drawn only when it is a terminal.
    Attributes:
        seconds: the compile's wall time (s), set by ``finish``.
        cache_hits, cache_requests: programs JAX's persistent cache supplied,
            and programs that asked it, during the compile.
    """

    def __init__(self, what: str, log: Optional[Callable[[str], object]] = print, *,
                 announce_after_s: float = 0.0, stream=None):
        if not isinstance(what, str) or not what:
            raise ValueError(f"what must be a non-empty string naming what compiles, got {what!r}")
        if announce_after_s < 0:
            raise ValueError(f"announce_after_s must be >= 0 seconds, got {announce_after_s!r}")
        self.what = what
        self.log = log
        self.announce_after_s = float(announce_after_s)
        self.stream = stream if stream is not None else sys.stderr
        self.seconds: Optional[float] = None
        self.cache_hits = 0
        self.cache_requests = 0
        self._t0 = None
        self._hits0 = (0, 0)
        self._done = threading.Event()
        self._announced = False
        self._lock = threading.Lock()
        self._thread = None

    # --------------------------------------------------------------- lifecycle
    def start(self) -> "CompileNotice":
        """Start timing; announce (now or after ``announce_after_s``) and show
        progress until ``finish``."""
        _listen()
        self._t0 = time.perf_counter()
        self._hits0 = cache_hits()
        if self.log is not None:
            if self.announce_after_s == 0:
                self._announce()
            self._thread = threading.Thread(target=self._watch, name=f"compile notice: {self.what}", daemon=True)
            self._thread.start()
        return self

    def finish(self) -> float:
        """Stop; say how long it took (if announced). Returns the seconds."""
        if self._t0 is None:
            raise RuntimeError("finish() before start()")
        with self._lock:
            if self.seconds is not None:
                return self.seconds
            self.seconds = time.perf_counter() - self._t0
            hits, requests = cache_hits()
            self.cache_hits, self.cache_requests = hits - self._hits0[0], requests - self._hits0[1]
            self._done.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        if self._announced and self.log is not None:
            self.log(self.summary())
        return self.seconds

    def summary(self) -> str:
        """``compiled <what> in N s`` (and the cache's share, if any)."""
        text = f"compiled {self.what} in {self.seconds:.1f} s"
        if self.cache_hits:
            text += (f" ({self.cache_hits} of {self.cache_requests} programs from the persistent "
                     "compilation cache)")
        return text

    def __enter__(self) -> "CompileNotice":
        return self.start()

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is None:
            self.finish()
        else:  # a failed compile: stop the spinner, say nothing more
            self._announced = False
            self.finish()

    # ---------------------------------------------------------------- progress
    def _announce(self) -> None:
        with self._lock:
            if self._announced or self.seconds is not None:
                return
            self._announced = True
        self.log(f"compiling {self.what} ...")

    def _elapsed(self) -> float:
        return time.perf_counter() - self._t0

    def _watch(self) -> None:
        if self.announce_after_s and self._done.wait(self.announce_after_s):
            return
        self._announce()
        isatty = getattr(self.stream, "isatty", None)
        if isatty is not None and isatty():
            self._spin()
        else:
            marks = still_compiling_marks()
            mark = next(marks)
            while True:
                note = XLA_BANNER_NOTE_S if not _banner_explained.is_set() else float("inf")
                if self._done.wait(max(0.0, min(mark, note) - self._elapsed())):
                    return
                if self._elapsed() >= note:
                    self._explain_banner()
                    continue
                self.log(f"still compiling {self.what}: {self._elapsed():.0f} s")
                mark = next(marks)

    def _explain_banner(self, bar=None) -> None:
        """Say ``XLA_BANNER_NOTE`` unless this process has said it (on a
        terminal, with the spinner's line cleared first)."""
        with _counts_lock:
            if _banner_explained.is_set():
                return
            _banner_explained.set()
        if bar is not None:
            bar.clear()
        self.log(XLA_BANNER_NOTE)

    def _spin(self) -> None:
        from tqdm.auto import tqdm

        bar = tqdm(total=None, bar_format="{desc}", file=self.stream, leave=False, dynamic_ncols=True)
        try:
            frame = 0
            while not self._done.wait(SPINNER_INTERVAL_S):
                if self._elapsed() >= XLA_BANNER_NOTE_S and not _banner_explained.is_set():
                    self._explain_banner(bar)
                bar.set_description_str(f"{_SPINNER[frame % len(_SPINNER)]} compiling {self.what}: "
                                        f"{self._elapsed():.0f} s", refresh=True)
                frame += 1
        finally:
            bar.close()

