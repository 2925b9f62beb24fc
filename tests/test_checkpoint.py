"""jaxecon.checkpoint: (static config, EnvState, EnvParams) in memory and on disk.

The economy is the interface tests', ``common.TINY_CONFIG`` (one env
object through ``jitted_env``); it is stepped with the interfaces' host driver,
``jaxecon.interfaces.host.HostEconomy``, so the jitted step compiles once for
all three test modules.
"""

from __future__ import annotations

import dataclasses
import json
import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import jaxecon
from jaxecon import checkpoint
from jaxecon.interfaces.host import HostEconomy

from common import TINY_CONFIG, tree_equal


@pytest.fixture(scope="module")
def env(jitted_env):
    return jitted_env(TINY_CONFIG).env


def actions(env, k: int):
    rng = np.random.default_rng(k)
    dims = env.action_space("a").nvec
    return {"a": rng.integers(0, dims, size=(env.n_agents, len(dims))).astype(np.int32),
            "p": np.zeros(1, np.int32)}


def test_static_config_is_json_and_equal_for_equal_configs(env):
    cfg = checkpoint.static_config(env)
    assert json.loads(json.dumps(cfg)) == cfg
    assert cfg == checkpoint.static_config(jaxecon.make_from_config(dict(TINY_CONFIG)))
    assert cfg["n_agents"] == 2 and cfg["episode_length"] == 3
    assert [next(iter(c)) for c in cfg["components"]] == ["Build", "Gather"]
    assert cfg["components"][0]["Build"]["payment"] == 10
    with pytest.raises(TypeError, match="jaxecon environment"):
        checkpoint.static_config(TINY_CONFIG)
    from jaxecon.wrappers import LogWrapper

    with pytest.raises(TypeError, match=r"got jaxecon.wrappers.log.LogWrapper \(a wrapped env: pass its jaxecon env, "
                                        r"env.unwrapped\)"):
        checkpoint.static_config(LogWrapper(env))


def test_save_load_continues_bit_for_bit(env, tmp_path):
    eco = HostEconomy(env, seed=3)
    eco.reset()
    eco.step(actions(env, 0))
    params = eco.params
    path = checkpoint.save(tmp_path / "ckpt", env, eco.state, eco.params)
    key = eco.key
    first = [eco.step(actions(env, k)) for k in range(1, 4)] + [eco.reset()]

    state, loaded_params = checkpoint.load(path, env)
    assert tree_equal(loaded_params, params)
    assert type(loaded_params.scenario.isoelastic_eta) is float  # as saved
    replay = HostEconomy(env)
    replay.state, replay.params, replay.key = state, loaded_params, key
    again = [replay.step(actions(env, k)) for k in range(1, 4)] + [replay.reset()]
    assert tree_equal(first, again)
    assert tree_equal(eco.state, replay.state)


def test_batched_states_and_extras_round_trip(env, tmp_path):
    eco = HostEconomy(env, seed=4)
    eco.reset()
    batch = jax.tree.map(lambda *x: jnp.stack(x), eco.state, eco.state)
    key = jax.random.key(9)
    build = eco.params.components["Build"].replace(payment=jnp.float32(12.5))
    params = eco.params.replace(components={**eco.params.components, "Build": build})
    snap = checkpoint.snapshot(env, batch, params, kind="test",
                               extra={"key": key, "turn": 2, "nested": {"a/b": np.arange(3)}})
    checkpoint.write(tmp_path / "b", snap)
    back = checkpoint.read(tmp_path / "b", env, kind="test")
    assert tree_equal(back.state, batch) and back.state.loc.shape == (2, env.n_agents, 2)
    # leaf kinds come back as saved: Python floats stay Python floats, arrays stay arrays
    assert tree_equal(back.params, params)
    assert type(back.params.scenario.isoelastic_eta) is float
    assert isinstance(back.params.components["Build"].payment, jax.Array)
    assert back.extra["turn"] == 2 and type(back.extra["turn"]) is int
    np.testing.assert_array_equal(back.extra["nested"]["a/b"], np.arange(3))
    assert np.array_equal(jax.random.key_data(back.extra["key"]), jax.random.key_data(key))
    # uneven batch axes do not fit: save refuses them, and read a file that has them
    bad = batch.replace(loc=batch.loc[0])
    with pytest.raises(ValueError, match=r"save: state .*state leaf .* has shape"):
        checkpoint.save(tmp_path / "uneven", env, bad, eco.params)
    assert not (tmp_path / "uneven").exists()
    checkpoint.write(tmp_path / "uneven", checkpoint.snapshot(env, bad, eco.params))
    with pytest.raises(ValueError, match="state leaf .* has shape"):
        checkpoint.load(tmp_path / "uneven", env)


def test_snapshots_are_immutable(env):
    eco = HostEconomy(env)
    eco.reset()
    snap = checkpoint.snapshot(env, eco.state, eco.params, extra={"obs": np.zeros(2)})
    with pytest.raises(dataclasses.FrozenInstanceError):
        snap.state = None
    with pytest.raises(TypeError):
        snap.extra["obs"] = None
    with pytest.raises(ValueError, match="read-only"):
        snap.extra["obs"][0] = 1.0
    assert checkpoint.verify(snap, env) is snap
    with pytest.raises(ValueError, match="made by 'jaxecon', not by 'other'"):
        checkpoint.verify(snap, env, kind="other")
    with pytest.raises(TypeError, match="token returned by get_state"):
        checkpoint.verify(eco.state, env)


def test_another_configuration_is_an_error_naming_the_keys(env, tmp_path):
    eco = HostEconomy(env)
    eco.reset()
    checkpoint.save(tmp_path / "c", env, eco.state, eco.params)
    other = dict(TINY_CONFIG, n_agents=3, components=[{"Build": {"payment": 5}}, {"Gather": {}}])
    with pytest.raises(ValueError) as err:
        checkpoint.load(tmp_path / "c", jaxecon.make_from_config(other))
    message = str(err.value)
    assert "different configuration" in message
    assert "components.Build.payment (saved 10, this env 5)" in message
    assert "n_agents (saved 2, this env 3)" in message
    reordered = dict(TINY_CONFIG, components=[{"Gather": {}}, {"Build": {}}])
    with pytest.raises(ValueError, match=r"components \(saved \['Build', 'Gather'\], this env \['Gather', 'Build'\]\)"):
        checkpoint.load(tmp_path / "c", jaxecon.make_from_config(reordered))


def test_save_needs_the_envs_state_and_params(env, tmp_path):
    with pytest.raises(TypeError, match="state must be the env's EnvState"):
        checkpoint.save(tmp_path / "none", env, None, env.default_params)
    _, state = jax.eval_shape(env.reset, jax.random.key(0), env.default_params)
    with pytest.raises(TypeError, match="params must be the env's EnvParams"):
        checkpoint.save(tmp_path / "p", env, state, {"isoelastic_eta": 0.23})
    assert not (tmp_path / "none").exists() and not (tmp_path / "p").exists()


def test_missing_or_foreign_paths(env, tmp_path):
    with pytest.raises(FileNotFoundError, match="no checkpoint directory"):
        checkpoint.load(tmp_path / "nowhere", env)
    (tmp_path / "empty").mkdir()
    with pytest.raises(FileNotFoundError, match="is not a jaxecon checkpoint"):
        checkpoint.load(tmp_path / "empty", env)
    eco = HostEconomy(env)
    eco.reset()
    path = checkpoint.save(tmp_path / "v", env, eco.state, eco.params)
    doc = json.loads((tmp_path / "v" / "config.json").read_text())
    doc["version"] = 99
    (tmp_path / "v" / "config.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="version 1 or 2"):
        checkpoint.load(path, env)


def test_save_refuses_a_path_it_would_clobber(env, tmp_path):
    """A directory holding the user's own config.json had it replaced by the checkpoint's index."""
    eco = HostEconomy(env)
    eco.reset()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "config.json").write_text('{"lr": 0.1}')
    with pytest.raises(ValueError, match=r"^'.*mine' holds a config\.json that is not a jaxecon checkpoint's; a "
                                         r"checkpoint written there would replace it: choose an empty directory "
                                         r"or a checkpoint's$"):
        checkpoint.save(tmp_path / "mine", env, eco.state, eco.params)
    assert (tmp_path / "mine" / "config.json").read_text() == '{"lr": 0.1}'
    assert os.listdir(tmp_path / "mine") == ["config.json"]
    (tmp_path / "a_file").write_text("")
    with pytest.raises(ValueError, match=r"^the checkpoint directory '.*a_file' is a file; name a directory"):
        checkpoint.save(tmp_path / "a_file", env, eco.state, eco.params)
    with pytest.raises(ValueError, match=r"^the checkpoint directory must be a non-empty path, got ''$"):
        checkpoint.save("", env, eco.state, eco.params)
    path = checkpoint.save(tmp_path / "ok", env, eco.state, eco.params)
    assert checkpoint.save(path, env, eco.state, eco.params) == path  # a checkpoint is replaced, as documented


def _saved(env, tmp_path, name="c"):
    eco = HostEconomy(env, seed=5)
    eco.reset()
    path = checkpoint.save(tmp_path / name, env, eco.state, eco.params)
    return path, eco, (tmp_path / name / json.loads((tmp_path / name / "config.json").read_text())["arrays_file"])


def test_bad_checkpoint_files_fail_naming_the_checkpoint_and_the_file(env, tmp_path):
    path, _, arrays = _saved(env, tmp_path)
    good = arrays.read_bytes()
    arrays.write_bytes(good[: len(good) // 2])  # truncated
    with pytest.raises(ValueError, match=rf"checkpoint '.*c': {arrays.name} is truncated or not an .npz archive"):
        checkpoint.load(path, env)
    arrays.write_bytes(b"garbage" * 100)  # garbled
    with pytest.raises(ValueError, match="is truncated or not an .npz archive"):
        checkpoint.load(path, env)
    np.savez(arrays, **{"state.0": np.array([{"a": 1}], dtype=object)})  # would need pickle
    with pytest.raises(ValueError, match="need pickle to load, which jaxecon never writes and does not load"):
        checkpoint.load(path, env)
    np.savez(arrays, **{"state.0": np.zeros(3)})  # a real npz without the listed arrays
    with pytest.raises(ValueError, match=r"lacks the arrays \['state.1'"):
        checkpoint.load(path, env)
    arrays.unlink()
    with pytest.raises(FileNotFoundError, match=f"config.json names {arrays.name}, which is missing"):
        checkpoint.load(path, env)
    config = tmp_path / "c" / "config.json"
    config.write_text('{"format": "jaxecon-checkpoint", "vers')  # truncated JSON
    with pytest.raises(ValueError, match=r"checkpoint '.*c': config.json is not valid JSON"):
        checkpoint.load(path, env)
    config.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="config.json is not valid JSON"):
        checkpoint.load(path, env)
    config.write_text(json.dumps({"format": "jaxecon-checkpoint", "version": 2}))
    with pytest.raises(ValueError, match=r"config.json is garbled \(it lacks \['kind', 'config', 'arrays'\]\)"):
        checkpoint.load(path, env)
    config.write_text("[1, 2]")
    with pytest.raises(ValueError, match="is not a jaxecon checkpoint of version 1 or 2"):
        checkpoint.load(path, env)


def _rewrite_arrays(arrays, name, value):
    """Replace array ``name`` of the checkpoint's arrays file (the index is left as it is)."""
    with np.load(arrays) as npz:
        saved = {k: npz[k] for k in npz.files}
    saved[name] = value
    np.savez(arrays, **saved)


def test_edited_or_invalid_params_are_refused_like_the_state(env, tmp_path):
    """A params leaf of another shape than the index lists (one element short),
    or NaN params, are refused at load (validate_params' message), not on the first step."""
    path, eco, arrays = _saved(env, tmp_path)
    doc = json.loads((tmp_path / "c" / "config.json").read_text())
    i = next(i for i, m in enumerate(doc["arrays"]["params"]) if m["path"] == ".scenario.energy_cost")
    _rewrite_arrays(arrays, f"params.{i}", np.zeros(0))  # a scalar one element short: empty
    with pytest.raises(checkpoint.files.CheckpointError) as err:
        checkpoint.load(path, env)
    assert str(err.value) == (f"checkpoint {path!r}: {arrays.name} holds params leaf .scenario.energy_cost with "
                              "shape (0,), but config.json lists () (an edited or mismatched arrays file)")
    _rewrite_arrays(arrays, f"params.{i}", np.array(np.nan))
    with pytest.raises(ValueError) as err:
        checkpoint.load(path, env)
    assert str(err.value) == (f"checkpoint {path}: its params are not valid: parameters must be finite numbers "
                              "(no NaN or inf), got scenario.energy_cost = nan")
    nan_params = eco.params.replace(scenario=eco.params.scenario.replace(energy_cost=float("nan")))
    with pytest.raises(ValueError) as err:
        checkpoint.save(tmp_path / "nan", env, eco.state, nan_params)
    assert str(err.value) == ("save: params are not valid, so their checkpoint could not be loaded: parameters "
                              "must be finite numbers (no NaN or inf), got scenario.energy_cost = nan")
    assert not (tmp_path / "nan").exists()
    taxed = jaxecon.make("uniform/simple_wood_and_stone", n_agents=2, world_size=[6, 6], episode_length=3,
                         components=[{"Build": {}}, {"Gather": {}}, {"PeriodicBracketTax": {}}])
    _, shapes = jax.eval_shape(taxed.reset, jax.random.key(0), taxed.default_params)
    state = jax.tree.map(lambda x: jax.random.key(0) if jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key)
                         else jnp.zeros(x.shape, x.dtype), shapes)
    path = checkpoint.save(tmp_path / "taxed", taxed, state, taxed.default_params)
    doc = json.loads((tmp_path / "taxed" / "config.json").read_text())
    i = next(i for i, m in enumerate(doc["arrays"]["params"]) if m["path"].endswith(".bracket_cutoffs"))
    cutoffs = np.asarray(taxed.default_params.components["PeriodicBracketTax"].bracket_cutoffs)
    _rewrite_arrays(tmp_path / "taxed" / doc["arrays_file"], f"params.{i}", cutoffs[:-1])
    with pytest.raises(ValueError, match=r"holds params leaf .components\['PeriodicBracketTax'\].bracket_cutoffs "
                                         r"with shape \(6,\), but config.json lists \(7,\)"):
        checkpoint.load(path, taxed)
    doc["arrays"]["params"][i]["shape"] = [6]  # the index edited to match: the env's own shape refuses it
    (tmp_path / "taxed" / "config.json").write_text(json.dumps(doc))
    with pytest.raises(ValueError) as err:
        checkpoint.load(path, taxed)
    assert str(err.value) == (f"checkpoint {path}: params leaf .components['PeriodicBracketTax'].bracket_cutoffs "
                              "has shape (6,), this env's is (7,)")


def test_a_training_runs_checkpoint_says_what_loads_it(env, tmp_path):
    from flax import struct

    from jaxecon.training import checkpoint as training_checkpoint
    from jaxecon.training.config import load_train_config

    @struct.dataclass
    class Runner:
        policies: dict
        updates: jax.Array

    run = tmp_path / "run"
    training_checkpoint.save(run / "checkpoints", Runner({"a": {"w": jnp.zeros(3)}}, jnp.int32(1)),
                             load_train_config("default"))
    for where in (run, run / "checkpoints", run / "checkpoints" / "1", run / "checkpoints" / "1" / "run"):
        with pytest.raises(ValueError) as err:
            checkpoint.load(where, env)
        assert str(err.value) == (
            f"checkpoint {str(where)!r} is a training run's checkpoint (jaxecon train: the PPO runner, with its "
            "networks and economies), not an economy's (jaxecon.checkpoint.save): evaluate it with "
            f"`jaxecon evaluate {run}`, continue it with `jaxecon train --resume {run}`, or read it with "
            f"jaxecon.training.checkpoint.restore_runner({str(run)!r}, ppo, cfg)")
    other = jaxecon.make("uniform/simple_wood_and_stone", n_agents=3, world_size=[8, 8], episode_length=5,
                         components=[{"Build": {}}, {"Gather": {}}])
    eco = HostEconomy(env)
    eco.reset()
    checkpoint.save(tmp_path / "c", env, eco.state, eco.params)
    with pytest.raises(ValueError) as err:
        checkpoint.load(tmp_path / "c", other)
    every = checkpoint._differences(checkpoint.static_config(env), checkpoint.static_config(other))
    assert len(every) > 10 and str(err.value).endswith(
        "; ".join(every[:10]) + f"; and {len(every) - 10} more")  # the first 10 keys, then how many more


def test_arguments_are_named(env, tmp_path):
    with pytest.raises(TypeError, match=r"path must be a checkpoint directory \(str or os.PathLike\), got NoneType"):
        checkpoint.load(None, env)
    with pytest.raises(TypeError, match="path must be a checkpoint directory"):
        checkpoint.save(3, env, None, env.default_params)
    path, eco, _ = _saved(env, tmp_path)
    with pytest.raises(TypeError, match="jaxecon environment"):
        checkpoint.load(path, TINY_CONFIG)


def test_save_refuses_another_economys_state(env, tmp_path):
    other = jaxecon.make_from_config(dict(TINY_CONFIG, n_agents=3))
    _, foreign = jax.eval_shape(other.reset, jax.random.key(0), other.default_params)
    foreign = jax.tree.map(lambda x: jnp.zeros(x.shape, x.dtype) if not jax.dtypes.issubdtype(
        x.dtype, jax.dtypes.prng_key) else jax.random.key(0), foreign)
    with pytest.raises(ValueError, match=r"save: state \(another economy's, or a malformed one\): state leaf "
                                         r".* has shape \(3,"):
        checkpoint.save(tmp_path / "f", env, foreign, env.default_params)
    eco = HostEconomy(env)
    eco.reset()
    wrong_dtype = eco.state.replace(loc=eco.state.loc.astype(jnp.float32))
    with pytest.raises(ValueError, match=r"state leaf .*loc has dtype float32"):
        checkpoint.save(tmp_path / "f", env, wrong_dtype, eco.params)
    assert not (tmp_path / "f").exists()


def test_a_save_that_fails_midway_leaves_the_previous_checkpoint(env, tmp_path, monkeypatch):
    path, eco, first_arrays = _saved(env, tmp_path)
    before = checkpoint.load(path, env)
    eco.step(actions(env, 1))
    real_replace = os.replace

    def killed(src, dst):  # the writer dies just before its commit
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "replace", killed)
    with pytest.raises(KeyboardInterrupt):
        checkpoint.save(path, env, eco.state, eco.params)
    monkeypatch.setattr(os, "replace", real_replace)
    assert tree_equal(checkpoint.load(path, env), before)  # the new arrays file is an orphan, ignored
    checkpoint.save(path, env, eco.state, eco.params)  # the next save commits and clears the leftovers
    assert tree_equal(checkpoint.load(path, env)[0], eco.state)
    names = sorted(x.name for x in (tmp_path / "c").iterdir())
    assert len(names) == 2 and names[1] == "config.json" and names[0].startswith("arrays-"), names


_WRITER = """
import sys, jax, jaxecon
from jaxecon import checkpoint
sys.path.insert(0, {tests!r})
from common import TINY_CONFIG
env = jaxecon.make_from_config(dict(TINY_CONFIG))
p = env.default_params
_, a = jax.jit(env.reset)(jax.random.key(1), p)
_, b = jax.jit(env.reset)(jax.random.key(2), p)
checkpoint.save({path!r}, env, a, p)
print("ready", flush=True)
i = 0
while True:
    checkpoint.save({path!r}, env, (a, b)[i % 2], p)
    i += 1
"""


def test_a_writer_killed_at_any_moment_leaves_a_loadable_checkpoint(env, tmp_path):
    import pathlib
    import random
    import signal
    import subprocess
    import sys
    import time

    path = str(tmp_path / "k")
    p = env.default_params
    states = [jax.jit(env.reset)(jax.random.key(k), p)[1] for k in (1, 2)]
    code = _WRITER.format(tests=str(pathlib.Path(__file__).parent), path=path)
    rng = random.Random(0)
    for _ in range(3):
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.05, 0.4))  # many saves per second: killed mid-save more often than not
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        state, _ = checkpoint.load(path, env)
        assert tree_equal(state, states[0]) or tree_equal(state, states[1])
