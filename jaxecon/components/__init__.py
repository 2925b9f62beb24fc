"""Components, one Foundation component family per module; importing registers them."""

from jaxecon.components.build import Build
from jaxecon.components.gather import Gather

__all__ = ["Build", "Gather"]
