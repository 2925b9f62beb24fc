"""Foundation's ``scenarios/simple_wood_and_stone/layout_from_file.py`` path:
``LayoutFromFile`` and ``SplitLayout``."""

from jaxecon.core.registry import scenario_registry
from jaxecon.foundation.scenario_envs import LayoutFromFile, SplitLayout

__all__ = ["LayoutFromFile", "SplitLayout", "scenario_registry"]
