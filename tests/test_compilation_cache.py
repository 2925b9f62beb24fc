"""The persistent compilation cache's one switch (``jaxecon.enable_persistent_cache``).

- The call turns JAX's cache on at the path given, else at
  ``$JAXECON_COMPILATION_CACHE``'s directory, else at the default one (also
  for ``on``/``true``/``yes``), once per process; ``0`` opts every call out;
  ``default=False`` (the shim's and ``jaxecon bench``'s opt-in) does nothing
  unasked; a bad ``path`` is refused by name.
- In a fresh process, ``jaxecon.make`` and ``make_from_config`` leave every
  cache setting (and the CPU runtime) as it was, even with
  ``$JAXECON_COMPILATION_CACHE`` set; building a Foundation shim environment
  then turns the cache on there (the variable is the shim user's opt-in).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import jax
import pytest

import jaxecon
from jaxecon import compilation_cache
from jaxecon.foundation import cpu_runtime

#: The JAX settings jaxecon's call writes.
SETTINGS = ("jax_compilation_cache_dir", "jax_persistent_cache_min_compile_time_secs")


@pytest.fixture
def no_cache(monkeypatch):
    """This process with the cache off and unchecked for the test; the session's settings restored after."""
    saved = {k: jax.config.values[k] for k in SETTINGS}
    monkeypatch.setattr(compilation_cache, "_checked", False)
    monkeypatch.delenv(compilation_cache.ENV_VAR, raising=False)
    jax.config.update("jax_compilation_cache_dir", None)
    yield
    for k, v in saved.items():
        jax.config.update(k, v)


def _reset(monkeypatch):
    monkeypatch.setattr(compilation_cache, "_checked", False)
    jax.config.update("jax_compilation_cache_dir", None)


def test_the_call_turns_the_cache_on_where_asked(no_cache, monkeypatch, tmp_path):
    assert jaxecon.enable_persistent_cache is compilation_cache.enable_persistent_cache
    assert compilation_cache.enable_persistent_cache(default=False) is None  # not asked
    assert jax.config.jax_compilation_cache_dir is None and compilation_cache._checked is False
    where = compilation_cache.enable_persistent_cache(tmp_path / "given")
    assert where == str(tmp_path / "given") == jax.config.jax_compilation_cache_dir
    assert (tmp_path / "given").is_dir()
    assert jax.config.jax_persistent_cache_min_compile_time_secs == compilation_cache.MIN_COMPILE_TIME_S
    assert compilation_cache.enable_persistent_cache(tmp_path / "other") == where  # once per process

    _reset(monkeypatch)
    monkeypatch.setenv(compilation_cache.ENV_VAR, str(tmp_path / "from_env"))
    assert compilation_cache.enable_persistent_cache(default=False) == str(tmp_path / "from_env")

    _reset(monkeypatch)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(compilation_cache.ENV_VAR, "on")  # a switch, not a directory named "on"
    assert compilation_cache.enable_persistent_cache() == str(tmp_path / "xdg" / "jaxecon" / "jax")


def test_the_opt_out_holds_for_every_call(no_cache, monkeypatch, tmp_path):
    monkeypatch.setenv(compilation_cache.ENV_VAR, "0")
    assert compilation_cache.enable_persistent_cache() is None
    assert compilation_cache.enable_persistent_cache(tmp_path) is None
    assert jax.config.jax_compilation_cache_dir is None


def test_a_bad_path_is_refused_by_name(no_cache, tmp_path):
    with pytest.raises(TypeError, match="path must be a directory .* got int"):
        compilation_cache.enable_persistent_cache(5)
    (tmp_path / "a_file").write_text("")
    with pytest.raises(ValueError, match="path '.*a_file/cache': cannot create"):
        compilation_cache.enable_persistent_cache(tmp_path / "a_file" / "cache")
    assert jax.config.jax_compilation_cache_dir is None


def test_building_an_economy_changes_no_jax_setting():
    """A fresh process with ``$JAXECON_COMPILATION_CACHE`` set: ``make`` and
    ``make_from_config`` change nothing; the shim's first engine turns the cache on."""
    code = (
        "import json, jax, jaxecon\n"
        "from jaxecon.configs import default_config\n"
        f"keys = {list(SETTINGS) + ['jax_enable_compilation_cache', 'jax_cpu_enable_async_dispatch']}\n"
        "snap = lambda: {k: jax.config.values[k] for k in keys}\n"
        "before = snap()\n"
        "cfg = default_config()\n"
        "jaxecon.make_from_config(cfg)\n"
        "jaxecon.make(cfg.pop('scenario_name'), **cfg)\n"
        "after_make = snap()\n"
        "jaxecon.foundation.make_env_instance(**default_config())\n"
        "print(json.dumps([before, after_make, snap()]))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in (
        cpu_runtime.ENV_VAR, "JAX_COMPILATION_CACHE_DIR", "JAX_CPU_ENABLE_ASYNC_DISPATCH")}
    env["JAX_PLATFORMS"] = "cpu"
    # the session's cache (conftest) keeps the shim's compile a load
    cache_dir = jax.config.jax_compilation_cache_dir or str(compilation_cache.default_cache_dir())
    env[compilation_cache.ENV_VAR] = cache_dir
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    before, after_make, after_shim = json.loads(out.stdout.splitlines()[-1])
    assert before["jax_compilation_cache_dir"] is None
    assert after_make == before
    assert after_shim["jax_compilation_cache_dir"] == cache_dir
    assert after_shim["jax_persistent_cache_min_compile_time_secs"] == compilation_cache.MIN_COMPILE_TIME_S


def test_a_default_that_is_not_a_bool_is_refused(no_cache):
    with pytest.raises(TypeError, match=r"^default must be True or False, got 'x'$"):
        compilation_cache.enable_persistent_cache(default="x")
    assert jax.config.jax_compilation_cache_dir is None
