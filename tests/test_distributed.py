"""Data-parallel PPO (jaxecon.training.distributed) over devices and processes.

- one device: the mesh path is ``jax.jit(ppo.update)`` bit for bit;
- 4 forced CPU devices (a subprocess: ``XLA_FLAGS`` must be set before JAX
  starts): the trainer's sharded updates equal one device's to float
  tolerance, the economies really are split, and a 4-device checkpoint
  resumes on one device;
- two processes (``jax.distributed``, 2 CPU devices each, on a toy env that
  compiles fast): the same parameters as one process, logs and checkpoints
  written once, and the checkpoint resumes in one process.

The subprocesses inherit the session's cheaper XLA settings (``conftest.py``)
and add the forced devices (``common.forced_cpu_devices_env``).
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import socket
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

from common import forced_cpu_devices_env, tree_equal
from jaxecon.cli import main
from jaxecon.training import checkpoint as ckpt
from jaxecon.training import distributed
from jaxecon.training.config import ConfigError
from jaxecon.training.logging import read_metrics
from jaxecon.training.ppo import PPO
from jaxecon.training.trainer import start_runner, train
from test_training import MatchingGame, tiny_config

TESTS = pathlib.Path(__file__).resolve().parent


def _subprocess_env(devices: int) -> dict:
    root = str(TESTS.parent)
    return forced_cpu_devices_env(devices, PYTHONPATH=os.pathsep.join([root, str(TESTS)]))


def test_one_device_mesh_is_the_plain_update_bit_for_bit():
    cfg, env = _toy_config(), MatchingGame()
    ppo = PPO(cfg, env)
    plain, update = start_runner(ppo, cfg), jax.jit(ppo.update)
    par = distributed.DataParallel(cfg.trainer.num_envs, jax.devices()[:1])
    sharded_ppo = PPO(cfg, env, shard_minibatch=par.shard_minibatch)
    runner = par.place(start_runner(sharded_ppo, cfg, init=par.init(sharded_ppo)))
    sharded_update = par.compile_update(sharded_ppo, runner)
    for _ in range(3):
        plain, m = update(plain)
        runner, m_sharded = sharded_update(runner)
        assert tree_equal(jax.device_get(m), jax.device_get(m_sharded))
    assert int(runner.updates) == 3
    assert tree_equal(distributed.host_copy(plain), distributed.host_copy(runner))


def test_device_count_must_divide_num_envs():
    with pytest.raises(ConfigError, match=r"trainer.num_envs \(6\) is not a multiple of the 4 devices"):
        distributed.DataParallel(6, jax.devices()[:1] * 4)
    n = len(jax.devices())
    with pytest.raises(ValueError, match=f"devices must be in 1..{n}"):
        distributed.select_devices(n + 1)
    assert distributed.select_devices() == jax.devices()


@pytest.mark.parametrize("argv, message", [
    (["--num-processes", "2"], "need --coordinator"),
    (["--coordinator", "localhost:1234"], "needs num_processes and process_id"),
    (["--coordinator", "nohost", "--num-processes", "2", "--process-id", "0"], "HOST:PORT"),
    (["--coordinator", "localhost:1234", "--num-processes", "2", "--process-id", "2"],
     "process_id must be in 0..1"),
])
def test_cli_multihost_options_are_checked(argv, message, capsys):
    with pytest.raises(SystemExit):
        main(["train", *argv])
    assert message in capsys.readouterr().err


FOUR_DEVICES = textwrap.dedent('''
    import pathlib, sys
    import jax, numpy as np
    import jaxecon
    from jaxecon.training import distributed
    from jaxecon.training.logging import read_metrics
    from jaxecon.training.trainer import train
    from test_training import tiny_config
    assert len(jax.devices()) == 4, jax.devices()
    out = pathlib.Path(sys.argv[1])
    cfg = tiny_config()  # 8 economies, 2 per device
    env = jaxecon.make_from_config(cfg.env)
    kw = dict(env=env, progress=False, tensorboard=False, plot=False)
    one = train(cfg, out / "one", devices=1, max_updates=3, **kw)  # the plain single-device update
    four = train(cfg, out / "four", devices=4, max_updates=2, **kw)
    r = four["runner"]
    for x in jax.tree.leaves((r.env_state, r.obs, r.first)):
        assert len(x.sharding.device_set) == 4 and x.addressable_shards[0].data.shape[0] == 2, x.sharding
    for x in jax.tree.leaves(r.policies):
        assert len(x.sharding.device_set) == 4 and x.sharding.is_fully_replicated
    resumed = train(cfg, resume=out / "four", devices=1, max_updates=1, **kw)  # 4-device checkpoint, 1 device
    assert int(resumed["runner"].updates) == 3
    rows_one = read_metrics(out / "one" / "metrics.csv")
    rows_four = read_metrics(out / "four" / "metrics.csv")
    keys = [k for k in rows_one[0] if k not in ("wall_s", "steps_per_s")]
    for a, b in zip(rows_one, rows_four):
        np.testing.assert_allclose([b[k] for k in keys], [a[k] for k in keys], rtol=1e-4, atol=1e-5)
    assert len(rows_four) == 3
    for a, b in zip(jax.tree.leaves(one["runner"].policies), jax.tree.leaves(resumed["runner"].policies)):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-5)
    for a, b in zip(jax.tree.leaves(one["runner"].env_state), jax.tree.leaves(resumed["runner"].env_state)):
        np.testing.assert_array_equal(np.asarray(b), np.asarray(a))
    # a recurrent minibatch: sequences [L, S, ...] split on S, their start LSTM states [S, ...] on S
    par = distributed.DataParallel(8, jax.devices())
    mb = {"features": np.zeros((5, 8, 3)), "first": np.zeros((5, 8), bool), "carry": (np.zeros((8, 16)),)}
    laid = jax.jit(lambda mb: par.shard_minibatch(mb, True))(mb)
    assert [x.addressable_shards[0].data.shape for x in jax.tree.leaves(laid)] == [(2, 16), (5, 2, 3), (5, 2)]
    print("FOUR-DEVICES-OK")
''')


@pytest.mark.slow
def test_four_devices_match_one_device(tmp_path):
    """The tiny economy on 4 forced CPU devices vs 1, through the trainer and a resume on 1 device."""
    out = subprocess.run([sys.executable, "-c", FOUR_DEVICES, str(tmp_path)], env=_subprocess_env(4),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "FOUR-DEVICES-OK" in out.stdout


def _toy_config():
    cfg = tiny_config(num_envs=8, rollout_fragment_length=10, sgd_minibatch_size=40)
    return cfg.replace(general=dataclasses.replace(cfg.general, episodes=8))  # 160 steps: 2 updates


PROCESS = textwrap.dedent('''
    import sys
    from jaxecon.training import distributed
    distributed.initialize(f"localhost:{sys.argv[1]}", num_processes=2, process_id=int(sys.argv[2]))
    from jaxecon.training.trainer import train
    from test_distributed import _toy_config
    from test_training import MatchingGame
    res = train(_toy_config(), sys.argv[3], env=MatchingGame(), plot=False)
    print(f"PROCESS-OK {res['devices']} devices {res['processes']} processes")
''')


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_processes_match_one_process(tmp_path):
    port, run = _free_port(), tmp_path / "two"
    cmd = [sys.executable, "-c", PROCESS, str(port)]
    procs = [subprocess.Popen(cmd + [str(i), str(run)], env=_subprocess_env(2), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
             for i in range(2)]
    try:
        outs = [p.communicate(timeout=600) for p in procs]
    finally:
        for p in procs:
            p.kill()
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
        assert "PROCESS-OK 4 devices 2 processes" in out
    assert "step/s" in outs[0][1] and "step/s" not in outs[1][1]  # process 0's progress bar only
    assert len(list((run / "tb").glob("events.out.tfevents.*"))) == 1  # one writer
    assert [r["update"] for r in read_metrics(run / "metrics.csv")] == [1, 2]
    assert ckpt.latest_step(run / "checkpoints") == 2 and (run / "summary.json").is_file()

    cfg, env = _toy_config(), MatchingGame()
    one = train(cfg, tmp_path / "one", env=env, progress=False, tensorboard=False, plot=False, devices=1)
    two = ckpt.restore_runner(run, PPO(cfg, env), cfg)
    for a, b in zip(jax.tree.leaves(one["runner"].policies), jax.tree.leaves(two.policies)):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-4, atol=1e-5)
    assert tree_equal(distributed.host_copy(one["runner"].env_state), distributed.host_copy(two.env_state))
    longer = cfg.replace(general=dataclasses.replace(cfg.general, episodes=12))  # one more update
    resumed = train(longer, resume=run, env=env, progress=False, tensorboard=False, plot=False, devices=1)
    assert int(resumed["runner"].updates) == 3
