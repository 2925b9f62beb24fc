"""The wood-and-stone gridworld scenarios (Foundation's ``simple_wood_and_stone``)."""

from jaxecon.scenarios.simple_wood_and_stone.base import WoodAndStoneParams, WoodAndStoneState
from jaxecon.scenarios.simple_wood_and_stone.dynamic_layout import MultiZone, Quadrant, Uniform
from jaxecon.scenarios.simple_wood_and_stone.layout_from_file import (
    LayoutFromFile,
    SplitLayout,
    available_layouts,
)

__all__ = [
    "LayoutFromFile", "MultiZone", "Quadrant", "SplitLayout", "Uniform", "WoodAndStoneParams",
    "WoodAndStoneState", "available_layouts",
]
