"""Foundation's ``agents`` package: ``mobiles`` (``BasicMobileAgent``) and ``planners``
(``BasicPlanner``), the shim's agent views. ``jaxecon.foundation.agents`` itself is the
agent registry, as in Foundation (``foundation/__init__.py`` rebinds the name)."""

from jaxecon.core.registry import agent_registry
from jaxecon.foundation.agents import mobiles, planners

__all__ = ["agent_registry", "mobiles", "planners"]
