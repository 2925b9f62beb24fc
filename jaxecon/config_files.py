"""Reading config files: the one ``ConfigError`` and the one reader of a YAML or JSON file.

Both of jaxecon's config readers use it: the env config of ``jaxecon run
--config`` (``jaxecon.cli.config``) and the training config
(``jaxecon.training.config``), which re-export ``ConfigError`` (the same
class under the three names). What is theirs stays there: the shapes of an
env config file (flat, under ``env:``) in the first, the training config's
sections, keys (with the did-you-mean hint) and values in the second.

This module imports nothing of JAX (the commands read a config before they
import the trainer), and of jaxecon only ``jaxecon.configs``, when a config
names an economy.
"""

from __future__ import annotations

import json
import pathlib

__all__ = ["CONFIG_SUFFIXES", "ConfigError", "named_economy", "parse_config_text", "read_config_file"]

#: The suffixes of a config file (any case): YAML or JSON.
CONFIG_SUFFIXES = (".yaml", ".yml", ".json")


class ConfigError(ValueError):
    """A config (an env config file or a training config) that cannot be read,
    has the wrong shape, an unknown key or a bad value."""


def parse_config_text(text: str, where: str, suffix: str):
    """The content of a config file: ``text`` parsed as JSON (``suffix``
    ``".json"``) or YAML (``".yaml"``, ``".yml"``).

    Args:
        where: the file, as the messages name it (``"config file 'x.yaml'"``).
    Raises:
        ConfigError: another suffix, or unparsable content.
    """
    ext = suffix.lower()
    if ext not in CONFIG_SUFFIXES:
        raise ConfigError(f"{where} must end in .yaml, .yml or .json, got {ext or 'no extension'!r}")
    try:
        if ext == ".json":
            return json.loads(text)
        import yaml

        return yaml.safe_load(text)
    except Exception as exc:  # yaml.YAMLError, json.JSONDecodeError
        raise ConfigError(f"cannot parse {where}: {exc}") from None


def read_config_file(path) -> dict:
    """The mapping a YAML (``.yaml``/``.yml``) or JSON (``.json``) file holds.

    Raises:
        ConfigError: a missing file or a directory, an unreadable file, an
            unknown extension, unparsable content, or content that is not a
            mapping; the message names the file.
    """
    path = pathlib.Path(path)
    where = f"config file {str(path)!r}"
    if path.is_dir():
        raise ConfigError(f"{where} is a directory: give a .yaml, .yml or .json file")
    if not path.exists():
        raise ConfigError(f"{where} does not exist")
    if not path.is_file():
        raise ConfigError(f"{where} is not a regular file")
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read {where}: {exc}") from None
    data = parse_config_text(text, where, path.suffix)
    if not isinstance(data, dict):
        raise ConfigError(f"{where} must hold a mapping, got {type(data).__name__}")
    return data


def named_economy(name: str) -> dict:
    """The env config of ``env: NAME`` in a config file: a fresh copy of
    economy ``name`` of ``jaxecon.configs.ECONOMIES``.

    Raises:
        ConfigError: ``"'env': ..."``, no economy has that name (the message
            lists the names).
    """
    from jaxecon.configs import economy_config

    try:
        return economy_config(name)
    except ValueError as exc:
        raise ConfigError(f"'env': {exc}") from None
