"""A sharded rollout of the default economy across processes (hosts) with ``jax.distributed``.

Start one process per host (or several on one machine, to try it)::

    # host 0 (also the coordinator) and host 1 of 2:
    python benchmarks/multihost.py --coordinator 10.0.0.1:1234 --num-processes 2 --process-id 0
    python benchmarks/multihost.py --coordinator 10.0.0.1:1234 --num-processes 2 --process-id 1

    # the same on one machine, two CPU processes with 4 devices each:
    for i in 0 1; do XLA_FLAGS=--xla_force_host_platform_device_count=4 \\
        python benchmarks/multihost.py --coordinator localhost:12355 \\
        --num-processes 2 --process-id $i & done; wait

Every process builds the same economy, splits its share of the batch
(``--batch / num_processes`` economies, keys folded with its process id) into
a global array sharded over all processes' devices
(``jax.make_array_from_process_local_data``), and runs the jitted
``jaxecon.sharding.sharded_rollout``; nothing crosses devices during the
rollout. Each process prints its local devices, the global device count and
the env-steps/s of the whole batch (compile excluded); the mean labor
spent in its own economies shows that each host computed its share.
"""

from __future__ import annotations

import argparse
import time

import jax
import numpy as np


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    parser.add_argument("--coordinator", required=True, metavar="HOST:PORT",
                        help="address of process 0, reachable from every process")
    parser.add_argument("--num-processes", type=int, required=True)
    parser.add_argument("--process-id", type=int, required=True)
    parser.add_argument("--batch", type=int, default=256, help="economies in all (default 256)")
    parser.add_argument("--steps", type=int, default=100, help="steps per economy (default 100)")
    args = parser.parse_args(argv)
    if not 0 <= args.process_id < args.num_processes:
        parser.error(f"--process-id must be in 0..{args.num_processes - 1}, got {args.process_id}")

    jax.distributed.initialize(args.coordinator, num_processes=args.num_processes,
                               process_id=args.process_id)
    import jaxecon
    from jaxecon import sharding
    from jaxecon.configs import default_config

    env = jaxecon.make_from_config(default_config())
    params = env.default_params
    mesh = sharding.env_mesh()  # all processes' devices
    n_dev = mesh.devices.size
    if args.batch % n_dev:
        parser.error(f"--batch {args.batch} must be a multiple of the {n_dev} devices in all")
    local = jax.random.split(jax.random.fold_in(jax.random.key(0), jax.process_index()),
                             args.batch // jax.process_count())
    keys = jax.make_array_from_process_local_data(sharding.batch_sharding(mesh), local)
    rollout = sharding.sharded_rollout(env, args.steps, mesh)
    t0 = time.perf_counter()
    compiled = rollout.lower(keys, params).compile()
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    state, rew = compiled(keys, params)
    jax.block_until_ready(rew)
    run_s = time.perf_counter() - t0
    labor = state.endogenous["Labor"]  # [batch, n_agents], sharded
    own = np.concatenate([np.asarray(s.data) for s in labor.addressable_shards]).sum(axis=1)
    print(f"process {jax.process_index()}/{jax.process_count()}: {len(jax.local_devices())} local "
          f"of {jax.device_count()} devices; {args.batch} envs x {args.steps} steps in "
          f"{run_s:.2f} s = {args.batch * args.steps / run_s:,.0f} env-steps/s "
          f"(compile {compile_s:.1f} s); mean labor per economy over my {own.shape[0]} envs "
          f"{own.mean():.6f}", flush=True)
    jax.distributed.shutdown()


if __name__ == "__main__":
    main()
