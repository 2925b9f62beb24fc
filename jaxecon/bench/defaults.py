"""The benchmark's default sizes (``jaxecon bench``'s option defaults); imports nothing.

- ``DEFAULT_BATCH_SIZES``: batch sizes of the scan+vmap rollouts.
- ``ADAPTER_BATCH_SIZE``: the batch size of the object-adapter row when
  ``adapter_batch_sizes`` is not given (if ``batch_sizes`` has it): the size
  its overhead target is set at.
- ``DEFAULT_STEPS``: steps per rollout.
- ``DEFAULT_MAX_ENV_STEPS``: the cap on env-steps (batch x steps) per rollout.
"""

__all__ = ["ADAPTER_BATCH_SIZE", "DEFAULT_BATCH_SIZES", "DEFAULT_MAX_ENV_STEPS", "DEFAULT_STEPS"]

DEFAULT_BATCH_SIZES = (1, 16, 256, 1024, 4096)
ADAPTER_BATCH_SIZE = 1024
DEFAULT_STEPS = 200
DEFAULT_MAX_ENV_STEPS = 100_000
