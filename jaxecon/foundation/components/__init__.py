"""Foundation's ``components`` package, one module per Foundation file: ``build``,
``continuous_double_auction``, ``move`` (Gather), ``redistribution``, ``simple_labor``,
``covid19_components`` and ``utils``.

The classes are jaxecon's jitted components (``jaxecon.components``), registered in
the core component registry. ``jaxecon.foundation.components`` itself is that
registry, as in Foundation (``foundation/__init__.py`` rebinds the name).
"""

from jaxecon.core.registry import component_registry
from jaxecon.foundation.components import (
    build,
    continuous_double_auction,
    covid19_components,
    move,
    redistribution,
    simple_labor,
    utils,
)

__all__ = [
    "component_registry", "build", "continuous_double_auction", "covid19_components",
    "move", "redistribution", "simple_labor", "utils",
]
