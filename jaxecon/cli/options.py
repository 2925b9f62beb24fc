"""What the subcommands of ``jaxecon`` share: argument types and the device choice.

Imports no JAX (``select_device`` does, when called).
"""

from __future__ import annotations

import argparse

__all__ = ["DEVICE_KINDS", "PLANNERS", "nonnegative_int", "positive_int", "select_device"]

#: ``--device`` choices.
DEVICE_KINDS = ("cpu", "gpu", "tpu")

#: ``--planner`` choices: ``jaxecon.training.curriculum.PLANNERS``, repeated here
#: so that building the parser does not import the training stack (flax, optax).
PLANNERS = ("learned", "saez", "us-federal", "free-market")


def positive_int(text: str) -> int:
    """argparse type: an int >= 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (>= 1), got {value}")
    return value


def nonnegative_int(text: str) -> int:
    """argparse type: an int >= 0."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer (>= 0), got {value}")
    return value


def select_device(kind: str | None):
    """The first JAX device of ``kind`` ("cpu", "gpu" or "tpu"), or None for JAX's default.

    Raises:
        ValueError: if JAX has no device of that kind here (lists what it has).
    """
    if kind is None:
        return None
    import jax  # not at import: building the parser loads no JAX

    try:
        devices = jax.devices(kind)
    except RuntimeError as exc:
        have = sorted({d.platform for d in jax.devices()})
        raise ValueError(
            f"no {kind} device available to JAX ({str(exc).splitlines()[0]}); available: {have}"
        ) from None
    if not devices:
        raise ValueError(f"no {kind} device available to JAX")
    return devices[0]
