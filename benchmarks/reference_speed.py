"""Speed of the reference simulator (ai-economist 1.7.1, numpy).

    python benchmarks/reference_speed.py [--steps N] [--config default|gather_build|uniform10|...]

Prints env-steps/s (time inside ``env.step`` only) and loop-steps/s (random
valid actions sampled from the masks, steps and resets) for one of
jaxecon's named economies (``jaxecon.configs.ECONOMIES``), timed by
``jaxecon.interop.reference.reference_steps_per_second``, the same
measurement ``jaxecon bench`` reports beside jaxecon's.
"""

from __future__ import annotations

import argparse

from jaxecon.configs import ECONOMIES
from jaxecon.interop.reference import reference_steps_per_second

__all__ = ["measure_reference", "main"]


def measure_reference(config_name: str = "default", n_steps: int = 1000, seed: int = 1) -> dict:
    """``reference_steps_per_second`` for a named economy (a key of ``jaxecon.configs.ECONOMIES``).

    Returns its dict (``env_steps_per_s``, ``loop_steps_per_s``, ...) plus
    ``config`` (the name) and ``agent_steps_per_s`` (env steps/s x n_agents).

    Raises:
        ValueError: an unknown ``config_name``.
        ImportError: ai-economist is not installed (the message says how).
    """
    if config_name not in ECONOMIES:
        raise ValueError(f"config_name must be one of {list(ECONOMIES)}, got {config_name!r}")
    res = reference_steps_per_second(ECONOMIES[config_name].make(), n_steps=n_steps, seed=seed)
    res["config"] = config_name
    res["agent_steps_per_s"] = res["env_steps_per_s"] * res["n_agents"]
    return res


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000, help="env steps to time (default 1000)")
    parser.add_argument("--config", choices=list(ECONOMIES), default="default")
    parser.add_argument("--seed", type=int, default=1, help="seed (> 0)")
    args = parser.parse_args(argv)
    res = measure_reference(args.config, args.steps, args.seed)
    print(
        f"reference ai-economist, {args.config} ({res['n_agents']} agents), {res['n_steps']} steps: "
        f"{res['env_steps_per_s']:.0f} env-steps/s (env.step only), "
        f"{res['loop_steps_per_s']:.0f} steps/s (incl. action sampling + {res['n_resets']} resets), "
        f"{res['agent_steps_per_s']:.0f} agent-steps/s"
    )
    return res


if __name__ == "__main__":
    main()
