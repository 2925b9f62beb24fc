"""The wood-and-stone gridworld scenarios (Foundation's ``simple_wood_and_stone``)."""

from jaxecon.scenarios.simple_wood_and_stone.layout_from_file import (
    LayoutFromFile,
    SplitLayout,
    available_layouts,
)

__all__ = ["LayoutFromFile", "SplitLayout", "available_layouts"]
