"""Foundation's ``scenarios/simple_wood_and_stone`` package: ``layout_from_file`` and
``dynamic_layout``."""

from jaxecon.foundation.scenarios.simple_wood_and_stone import dynamic_layout, layout_from_file

__all__ = ["dynamic_layout", "layout_from_file"]
