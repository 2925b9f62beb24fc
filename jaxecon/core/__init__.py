"""jaxecon's core: state pytrees, registries, action layouts, the reset/step phases, the scenario base
class and the engine (the functional env).

The names below are imported on first access (PEP 562), as is each submodule
(``jaxecon.core.env``, ...): importing ``jaxecon.core.registry`` loads no JAX,
so ``import jaxecon`` can install the registries' loader and checks
(``jaxecon.registries``) and stay cheap.
"""

from __future__ import annotations

import importlib
import importlib.util

#: public name -> the module of jaxecon.core that defines it.
_LAZY: dict[str, str] = {
    "ActionLayout": "jaxecon.core.action_layout",
    "Component": "jaxecon.core.component",
    "Economy": "jaxecon.core.env",
    "EnvParams": "jaxecon.core.state",
    "EnvState": "jaxecon.core.state",
    "NoParams": "jaxecon.core.component",
    "NoState": "jaxecon.core.state",
    "Registry": "jaxecon.core.registry",
    "Scenario": "jaxecon.core.scenario",
    "SubState": "jaxecon.core.state",
    "agent_registry": "jaxecon.core.registry",
    "component_registry": "jaxecon.core.registry",
    "endogenous_registry": "jaxecon.core.registry",
    "landmark_registry": "jaxecon.core.registry",
    "resource_registry": "jaxecon.core.registry",
    "scenario_registry": "jaxecon.core.registry",
    "validate_params": "jaxecon.core.param_checks",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    """A public name of ``_LAZY`` or a submodule of jaxecon.core, imported now and kept.

    Raises:
        AttributeError: ``name`` is neither (as for any module attribute).
    """
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    elif not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
