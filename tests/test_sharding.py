"""Batches sharded over 8 (forced host) devices give the same rollout as one device."""

import os
import subprocess
import sys
import textwrap

import pytest

from common import forced_cpu_devices_env

SCRIPT = textwrap.dedent('''
    import jax, numpy as np, jaxecon
    from jaxecon import sharding
    assert len(jax.devices()) == 8, jax.devices()
    env = jaxecon.make("layout_from_file/simple_wood_and_stone",
                       components=[("Build", {}), ("Gather", {"skill_dist": "pareto"})],
                       n_agents=4, world_size=[25, 25], episode_length=20)
    params = env.default_params
    keys = jax.random.split(jax.random.key(0), 16)
    mesh = sharding.env_mesh()
    state, rew = sharding.sharded_rollout(env, 20, mesh)(sharding.shard(keys, mesh), params)
    assert len(state.loc.sharding.device_set) == 8, state.loc.sharding
    one = sharding.env_mesh(jax.devices()[:1])
    ref_state, ref_rew = sharding.sharded_rollout(env, 20, one)(keys, params)
    np.testing.assert_array_equal(np.asarray(state.loc), np.asarray(ref_state.loc))
    np.testing.assert_allclose(np.asarray(rew["a"]), np.asarray(ref_rew["a"]), rtol=1e-6, atol=1e-6)
    try:
        sharding.shard(keys[:12], mesh)
    except ValueError as e:
        assert "multiple of the 8 devices" in str(e)
    else:
        raise AssertionError("uneven batch accepted")
    print("SHARDED-OK")
''')


def test_sharded_rollout_matches_single_device():
    env = forced_cpu_devices_env(8)
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "SHARDED-OK" in out.stdout


def _free_port():
    import socket

    with socket.socket() as s:
        s.bind(("localhost", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_multihost_worked_command_two_processes():
    """benchmarks/multihost.py's documented command: two processes x 2 CPU devices, one batch.

    Each process's economies must end as they do when run alone on one device.
    """
    import pathlib
    import re

    script = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "multihost.py"
    env = forced_cpu_devices_env(2)
    port = _free_port()
    procs = [
        subprocess.Popen([sys.executable, str(script), "--coordinator", f"localhost:{port}",
                          "--num-processes", "2", "--process-id", str(i), "--batch", "8", "--steps", "5"],
                         env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err[-3000:]
    got = {}
    for out, _ in outs:
        m = re.search(r"process (\d)/2: 2 local of 4 devices; 8 envs x 5 steps.*over my 4 envs (\S+)", out)
        assert m, out
        got[int(m.group(1))] = float(m.group(2))
    assert sorted(got) == [0, 1]

    check = textwrap.dedent('''
        import jax, jaxecon
        from jaxecon import sharding
        from jaxecon.configs import default_config
        env = jaxecon.make_from_config(default_config())
        one = sharding.env_mesh(jax.devices()[:1])
        for i in range(2):
            keys = jax.random.split(jax.random.fold_in(jax.random.key(0), i), 4)
            state, _ = sharding.sharded_rollout(env, 5, one)(keys, env.default_params)
            print(float(state.endogenous["Labor"].sum(axis=1).mean()))
    ''')
    out = subprocess.run([sys.executable, "-c", check], env=dict(os.environ, JAX_PLATFORMS="cpu"),
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    alone = [float(x) for x in out.stdout.split()]
    assert min(alone) > 0  # labor is spent by every move, gather, build and order
    assert alone == [pytest.approx(got[0], abs=1e-5), pytest.approx(got[1], abs=1e-5)]


def test_bad_arguments_are_named_when_the_rollout_is_built():
    """``sharded_rollout(None, 0)`` was accepted (the errors came at the first call), ``shard(x, None)``
    raised an AttributeError and ``env_mesh([])`` built an empty mesh."""
    import jax.numpy as jnp

    import jaxecon
    from jaxecon import sharding

    env = jaxecon.make("uniform/simple_wood_and_stone", components=[{"Build": {}}, {"Gather": {}}],
                       n_agents=2, world_size=[6, 6], episode_length=3)
    with pytest.raises(ValueError, match=r"^n_steps must be an int >= 1, got 0$"):
        sharding.sharded_rollout(env, 0)
    with pytest.raises(TypeError, match=r"^env must be a jaxecon env \(jaxecon\.make\(\.\.\.\)\), got builtins\.NoneType$"):
        sharding.sharded_rollout(None, 2)
    with pytest.raises(TypeError, match=r"^mesh must be None \(all devices\) or a jax\.sharding\.Mesh"):
        sharding.sharded_rollout(env, 2, mesh="cpu")
    with pytest.raises(TypeError, match=r"^mesh must be a jax\.sharding\.Mesh \(e\.g\. env_mesh\(\)\), got NoneType$"):
        sharding.shard({"x": jnp.zeros(2)}, None)
    with pytest.raises(ValueError, match=r"^devices must name at least one device"):
        sharding.env_mesh([])
