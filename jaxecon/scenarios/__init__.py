"""Scenarios, one package per Foundation scenario family; importing registers them."""

from jaxecon.scenarios import simple_wood_and_stone  # noqa: F401
from jaxecon.scenarios import one_step_economy  # noqa: F401
from jaxecon.scenarios import covid19  # noqa: F401
