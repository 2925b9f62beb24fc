"""The wood-and-stone scenarios' computed Foundation attributes (``WoodAndStoneScenario.foundation_attributes``).

Follows ``ai_economist/foundation/scenarios/simple_wood_and_stone/layout_from_file.py``
(and ``dynamic_layout.py``, the same code): ``energy_weight``,
``curr_optimization_metric`` and ``get_current_optimization_metrics()``.
"""

from __future__ import annotations

import numpy as np

from jaxecon.core.groups import PLANNER_GROUP
from jaxecon.interop.foundation_hooks import FoundationAttribute

__all__ = ["wood_and_stone_attributes"]


def wood_and_stone_attributes(scenario) -> dict:
    """``{Foundation name: FoundationAttribute}`` of a wood-and-stone scenario object.

    - ``energy_weight`` (read-only float): the labor-cost annealing progress,
      1 without warm-up (``energy_warmup_constant`` <= 0), else ``1 - exp(-x /
      energy_warmup_constant)`` with x the completed episodes (``"decay"``)
      or the auto warm-up integrator (``"auto"``).
    - ``curr_optimization_metric``: ``{agent index (int): utility, "p": social
      welfare}``, floats, the values the last reward was measured against;
      writable with a dict of every key (``ValueError`` otherwise).
    - ``get_current_optimization_metrics``: Foundation's method, ``() ->``
      the same dict for the current state (``scenario.optimization_metrics``).
    """
    keys = list(range(scenario.n_agents)) + [PLANNER_GROUP]  # Foundation's agent ids: the edge

    def energy_weight(view) -> float:
        const = float(view.params.scenario.energy_warmup_constant)
        if const <= 0.0:
            return 1.0
        if scenario.energy_warmup_method == "decay":
            x = view.completions
        else:
            x = int(np.asarray(view.state.scenario.auto_warmup_integrator))
        return float(1.0 - np.exp(-x / const))

    def curr_metric(view) -> dict:
        return dict(zip(keys, np.asarray(view.state.scenario.curr_metric).tolist()))

    def set_curr_metric(value) -> dict:
        if not isinstance(value, dict) or set(map(str, value)) != set(map(str, keys)):
            raise ValueError(
                f"curr_optimization_metric must be a dict keyed by every agent index and 'p' "
                f"{keys}, got {value!r}"
            )
        by_key = {str(k): v for k, v in value.items()}
        return {"curr_metric": [by_key[str(k)] for k in keys]}

    def current_metrics_method(view):
        def get_current_optimization_metrics() -> dict:
            """Foundation's method: ``{agent.idx: utility, "p": social welfare}`` of the current state."""
            values = np.asarray(scenario.optimization_metrics(view.state, view.params)).tolist()
            return dict(zip(keys, values))
        return get_current_optimization_metrics

    return {
        "energy_weight": FoundationAttribute(energy_weight),
        "curr_optimization_metric": FoundationAttribute(curr_metric, set_curr_metric),
        "get_current_optimization_metrics": FoundationAttribute(current_metrics_method),
    }
