"""Batches sharded over 8 (forced host) devices give the same rollout as one device."""

import os
import subprocess
import sys
import textwrap

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
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=8", JAX_PLATFORMS="cpu")
    out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "SHARDED-OK" in out.stdout
