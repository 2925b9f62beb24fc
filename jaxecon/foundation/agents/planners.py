"""Foundation's ``agents/planners.py`` path: ``BasicPlanner`` (the shim's planner view)."""

from jaxecon.core.registry import agent_registry
from jaxecon.foundation.agent_views import BaseAgent, BasicPlanner

__all__ = ["BasicPlanner", "BaseAgent", "agent_registry"]
