"""The reference's figure for the benchmark: ai-economist 1.7.1 timed on the same config.

Goes through ``jaxecon.interop.reference`` (the optional route to the
reference; see there how to install it). When the reference is missing or
cannot run a config, the measurement is skipped with the reason.
"""

from __future__ import annotations

from jaxecon.interop.reference import reference_steps_per_second

__all__ = ["measure_reference"]


def measure_reference(config: dict, n_steps: int = 1000, seed: int = 1) -> dict:
    """The reference's speed on ``config`` (a Foundation env config dict).

    Returns ``reference_steps_per_second``'s dict (``env_steps_per_s``,
    ``loop_steps_per_s``, ``n_agents``, ...) plus ``agent_steps_per_s``, or
    ``{"skipped": reason}`` when the reference is not installed (the reason
    names the install command) or cannot build or run this config.
    """
    try:
        res = reference_steps_per_second(config, n_steps=n_steps, seed=seed)
    except ImportError as exc:
        return {"skipped": str(exc)}
    except Exception as exc:  # noqa: BLE001 - the reference cannot run this config
        return {"skipped": f"the reference failed on this config: {exc!r}"}
    res["agent_steps_per_s"] = res["env_steps_per_s"] * res["n_agents"]
    return res
