"""The COVID-19 scenario's computed Foundation attributes (``CovidAndEconomySimulation.foundation_attributes``).

Follows ``ai_economist/foundation/scenarios/covid19/covid19_env.py``:
``current_date``, ``np_float_dtype``, ``np_int_dtype`` and the WarpDrive
hooks ``get_data_dictionary()`` / ``get_tensor_dictionary()``, which raise.
"""

from __future__ import annotations

from datetime import timedelta

import numpy as np

from jaxecon.interop.foundation_hooks import FoundationAttribute

__all__ = ["covid_attributes"]


def _no_warp_drive(name: str):
    def method(*args, **kwargs):
        raise NotImplementedError(
            f"{name}() builds WarpDrive's CUDA data feed; jaxecon has no WarpDrive backend. "
            "Run many environments on an accelerator with the functional API instead "
            "(jax.vmap over jaxecon.make(...).step, or jaxecon.sharding)."
        )
    method.__name__ = name
    method.__doc__ = f"Foundation's WarpDrive hook ``{name}``: raises ``NotImplementedError``."
    return method


def covid_attributes(scenario) -> dict:
    """``{Foundation name: FoundationAttribute}`` of a ``CovidAndEconomySimulation`` object (all read-only).

    - ``current_date``: ``start_date + timestep`` days (a ``datetime``).
    - ``np_float_dtype``, ``np_int_dtype``: ``np.float32``, ``np.int32``.
    - ``get_data_dictionary``, ``get_tensor_dictionary``: functions that raise
      ``NotImplementedError`` (jaxecon has no WarpDrive backend).
    """
    def current_date(view):
        return scenario.start_date + timedelta(days=int(np.asarray(view.state.timestep)))

    return {
        "current_date": FoundationAttribute(current_date),
        "np_float_dtype": FoundationAttribute(lambda view: np.float32),
        "np_int_dtype": FoundationAttribute(lambda view: np.int32),
        "get_data_dictionary": FoundationAttribute(lambda view: _no_warp_drive("get_data_dictionary")),
        "get_tensor_dictionary": FoundationAttribute(lambda view: _no_warp_drive("get_tensor_dictionary")),
    }
