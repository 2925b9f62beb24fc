"""``jaxecon.compile_notice``: what a compile says, on a terminal and off one.

- a notice says what it compiles when it starts and how long it took;
- with ``announce_after_s`` a short compile says nothing;
- off a terminal, a long compile says it is still compiling at the marks;
  on one, a spinner with the elapsed seconds is drawn on the stream;
- a program the persistent compilation cache supplies is counted;
- bad arguments are refused; ``jaxecon run`` says what it compiles.
"""

from __future__ import annotations

import io
import time

import jax
import jax.numpy as jnp
import pytest

from jaxecon import compile_notice
from jaxecon.compile_notice import CompileNotice, still_compiling_marks


def test_a_notice_says_what_it_compiles_and_how_long_it_took():
    lines = []
    with CompileNotice("the thing", lines.append, stream=io.StringIO()) as notice:
        time.sleep(0.05)
    assert lines[0] == "compiling the thing ..."
    assert lines[1].startswith("compiled the thing in ") and lines[1].endswith(" s")
    assert len(lines) == 2 and notice.seconds >= 0.05


def test_a_short_compile_below_announce_after_says_nothing_and_a_long_one_does():
    lines = []
    with CompileNotice("quick", lines.append, announce_after_s=5.0, stream=io.StringIO()) as notice:
        pass
    assert lines == [] and notice.seconds < 5.0
    with CompileNotice("slow", lines.append, announce_after_s=0.05, stream=io.StringIO()):
        time.sleep(0.3)
    assert lines[0] == "compiling slow ..." and lines[1].startswith("compiled slow in ")


def test_off_a_terminal_a_long_compile_says_it_is_still_compiling(monkeypatch):
    assert [m for m, _ in zip(still_compiling_marks(), range(5))] == [10.0, 30.0, 60.0, 120.0, 180.0]
    monkeypatch.setattr(compile_notice, "still_compiling_marks", lambda: iter([0.05, 0.1, 1e9]))
    lines = []
    with CompileNotice("the long one", lines.append, stream=io.StringIO()):
        time.sleep(0.4)
    still = [x for x in lines if x.startswith("still compiling the long one: ")]
    assert len(still) == 2, lines
    assert lines[-1].startswith("compiled the long one in ")


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_on_a_terminal_a_spinner_shows_the_elapsed_seconds():
    term = _Terminal()
    lines = []
    with CompileNotice("the spun one", lines.append, stream=term):
        time.sleep(0.7)
    drawn = term.getvalue()
    assert "compiling the spun one: 0 s" in drawn
    assert sum(c in drawn for c in "|/-\\") >= 2  # the frames change
    assert lines[0] == "compiling the spun one ..." and lines[-1].startswith("compiled the spun one in ")


def test_a_long_compile_says_once_what_xlas_slow_compile_banner_means(monkeypatch):
    """XLA prints "Very slow compile? ... file a bug" 2 minutes into a compile;
    a notice says once per process, just before, that it means nothing is wrong."""
    import threading

    monkeypatch.setattr(compile_notice, "_banner_explained", threading.Event())
    monkeypatch.setattr(compile_notice, "XLA_BANNER_NOTE_S", 0.05)
    monkeypatch.setattr(compile_notice, "still_compiling_marks", lambda: iter([0.1, 1e9]))
    lines = []
    with CompileNotice("the first", lines.append, stream=io.StringIO()):
        time.sleep(0.3)
    with CompileNotice("the second", lines.append, stream=_Terminal()):
        time.sleep(0.5)
    assert lines.count(compile_notice.XLA_BANNER_NOTE) == 1, lines
    assert lines.index(compile_notice.XLA_BANNER_NOTE) == 1  # after "compiling the first ...", before the marks
    assert compile_notice.XLA_BANNER_NOTE.startswith(
        'note: a compile past 2 minutes makes XLA print a banner "Very slow compile? If you want to file a bug')
    assert "still compiling the first: 0 s" in lines  # the marks go on
    monkeypatch.setattr(compile_notice, "_banner_explained", threading.Event())
    spun = []
    with CompileNotice("spun", spun.append, stream=_Terminal()):
        time.sleep(0.5)
    assert spun.count(compile_notice.XLA_BANNER_NOTE) == 1, spun  # on a terminal too


def test_programs_from_the_persistent_cache_are_counted(tmp_path):
    before = (jax.config.jax_compilation_cache_dir, jax.config.jax_persistent_cache_min_compile_time_secs)
    jax.config.update("jax_compilation_cache_dir", str(tmp_path))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    try:
        def fn(x):
            return jnp.sin(x) * 7.25 + 3.5

        with CompileNotice("f, cold", None) as cold:
            jax.jit(fn).lower(jnp.zeros(3)).compile()
        jax.clear_caches()
        with CompileNotice("f, again", None) as warm:
            jax.jit(fn).lower(jnp.zeros(3)).compile()
    finally:
        jax.config.update("jax_compilation_cache_dir", before[0])
        jax.config.update("jax_persistent_cache_min_compile_time_secs", before[1])
    assert cold.cache_hits == 0 and "cache" not in cold.summary()
    assert 1 <= warm.cache_hits <= warm.cache_requests
    assert f"{warm.cache_hits} of {warm.cache_requests} programs from the persistent compilation cache" \
        in warm.summary()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="what must be a non-empty string"):
        CompileNotice("", print)
    with pytest.raises(ValueError, match="announce_after_s must be >= 0"):
        CompileNotice("x", print, announce_after_s=-1)
    with pytest.raises(RuntimeError, match="finish\\(\\) before start\\(\\)"):
        CompileNotice("x", print).finish()


def test_jaxecon_run_says_what_it_compiles(tmp_path, capsys):
    from jaxecon.cli import main

    assert main(["run", "--episodes", "1", "--episode-length", "10", "--batch", "2", "--no-progress",
                 "--no-video", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    for what in ("the reset of 2 economies", "the step scan", "the episode metrics"):
        assert f"compiling {what}" in out and f"compiled {what}" in out, out
