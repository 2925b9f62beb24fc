"""Foundation's ``base/base_agent.py`` path: ``BaseAgent`` and the agent registry.

``BaseAgent`` is the shim's agent view (``jaxecon.foundation.agent_views``),
the base of ``BasicMobileAgent`` and ``BasicPlanner``.
"""

from jaxecon.core.registry import Registry, agent_registry
from jaxecon.foundation.agent_views import BaseAgent

__all__ = ["BaseAgent", "Registry", "agent_registry"]
