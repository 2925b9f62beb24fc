"""Foundation's scenario classes as shim environments, under Foundation's class names.

In Foundation a scenario is a class, and ``CovidAndEconomyEnvironment(**config)``
(the WarpDrive tutorial's way) builds an environment as
``make_env_instance("CovidAndEconomySimulation", **config)`` does. Every
jaxecon scenario registered in ``jaxecon.scenario_registry`` is an attribute
of this module under its Foundation class name (the class's
``foundation_class_name``, else its ``__name__``: ``LayoutFromFile``,
``SplitLayout``, ``Uniform``, ``MultiZone``, ``Quadrant``, ``OneStepEconomy``,
``CovidAndEconomyEnvironment``, and any scenario registered later), whose
value is its shim class (``jaxecon.foundation.base.base_env.scenario_registry``),
so ``isinstance(env, foundation.scenarios.get(name))`` holds for either way of
building it; the module-layout files
(``jaxecon.foundation.scenarios.covid19.covid19_env`` and the others)
re-export them.
"""

from __future__ import annotations

from jaxecon.core.registry import scenario_registry as core_scenario_registry
from jaxecon.foundation.base.base_env import scenario_registry
from jaxecon.interop.foundation_hooks import foundation_class_name

__all__ = ["foundation_class_names"]


def foundation_class_names() -> dict:
    """``{Foundation class name: registered scenario name}`` of every jaxecon scenario
    in ``jaxecon.scenario_registry``; of several classes with one Foundation class
    name, the one whose scenario name was registered first (the built-in one)."""
    out = {}
    for cls in core_scenario_registry.classes():
        out.setdefault(foundation_class_name(cls), cls.name)
    return out


def __getattr__(name: str):
    """The shim class of the registered scenario whose Foundation class name is ``name``."""
    names = foundation_class_names()
    if name not in names:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}; "
                             f"the scenario classes are {sorted(names)}")
    return scenario_registry.get(names[name])


def __dir__() -> list:
    return sorted(set(globals()) | set(foundation_class_names()))
