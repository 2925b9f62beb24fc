"""The economy ``jaxecon run`` simulates: ``--config``, a named economy or a config file.

A name is a key of ``jaxecon.configs.ECONOMIES`` (``default`` without
``--config``). A config file is the dict Foundation users pass to
``make_env_instance``, YAML (``.yaml``/``.yml``) or JSON, either flat (with
``scenario_name``) or under an ``env:`` block, as in Foundation's RLlib
tutorial ``config.yaml`` (other blocks, e.g. ``trainer:``, are ignored); the
``env:`` block may also be a named economy (``env: default``), as in
jaxecon's training configs. The file reader and ``ConfigError`` are
``jaxecon.config_files``', shared with the training config
(``jaxecon.training.config``).
"""

from __future__ import annotations

import pathlib

from jaxecon.config_files import ConfigError, named_economy, read_config_file
from jaxecon.configs import ECONOMIES, economy_config

__all__ = ["ConfigError", "load_config", "resolve_config"]


def load_config(path) -> dict:
    """Read a Foundation-style env config from a YAML or JSON file.

    Accepts a flat dict with ``scenario_name`` or a dict whose ``env`` entry
    is such a dict (Foundation's RLlib tutorial ``config.yaml``) or the name
    of an economy of ``jaxecon.configs.ECONOMIES``. The file is read as a
    training config's is (``jaxecon.config_files.read_config_file``).

    Raises:
        ConfigError: a missing file or a directory, an unreadable file, an
            unknown extension, unparsable content, an ``env:`` naming no
            economy, or no ``scenario_name`` at the top level or under ``env:``.
    """
    data = read_config_file(path)
    where = f"config file {str(pathlib.Path(path))!r}"
    if isinstance(data.get("env"), str):
        try:
            return named_economy(data["env"])
        except ConfigError as exc:
            raise ConfigError(f"{where}: {exc}") from None
    if isinstance(data.get("env"), dict) and "scenario_name" in data["env"]:
        return dict(data["env"])
    if "scenario_name" in data:
        return dict(data)
    raise ConfigError(
        f"{where} has no 'scenario_name', neither at the top level nor under an 'env:' block"
    )


def resolve_config(value: str | None) -> tuple[dict, str]:
    """The env config ``--config value`` names, and where it came from (for the output).

    Args:
        value: a key of ``jaxecon.configs.ECONOMIES`` (a name wins over a file
            of that name), a config file path (``load_config``), or None: the
            economy ``default``.
    Returns:
        ``(config, source)``: a fresh config dict; ``"built-in economy 'NAME'"``
        or the path as given.
    Raises:
        ConfigError: a value that is neither a name nor an existing path (the
            message lists the names); as ``load_config`` for a file.
    """
    name = "default" if value is None else str(value)
    if name in ECONOMIES:
        return economy_config(name), f"built-in economy {name!r}"
    if not pathlib.Path(name).exists():
        raise ConfigError(f"config file {name!r} does not exist, and no economy has that name; "
                          f"the economies are {list(ECONOMIES)}")
    return load_config(name), name
