"""Scenarios, one package per Foundation scenario family; importing registers them."""

from jaxecon.scenarios import simple_wood_and_stone  # noqa: F401
