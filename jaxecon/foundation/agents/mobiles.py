"""Foundation's ``agents/mobiles.py`` path: ``BasicMobileAgent`` (the shim's agent view)."""

from jaxecon.core.registry import agent_registry
from jaxecon.foundation.agent_views import BaseAgent, BasicMobileAgent

__all__ = ["BasicMobileAgent", "BaseAgent", "agent_registry"]
