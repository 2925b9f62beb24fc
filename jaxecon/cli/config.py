"""The economy ``jaxecon run`` simulates: the built-in ``--scenario`` choices and ``--config`` files.

A config file is the dict Foundation users pass to ``make_env_instance``,
YAML (``.yaml``/``.yml``) or JSON, either flat (with ``scenario_name``) or
with it under an ``env:`` block, as in Foundation's RLlib tutorial
``config.yaml`` (other blocks, e.g. ``trainer:``, are ignored).
"""

from __future__ import annotations

import json
import pathlib

from jaxecon.configs import default_config

__all__ = ["RUN_SCENARIOS", "ConfigError", "load_config"]


def _covid_config() -> dict:
    from jaxecon.scenarios.covid19.config import real_world_policies_covid_config

    return real_world_policies_covid_config()


#: ``--scenario`` name -> (config maker, what runs). ``gather_trade_build`` is
#: also the default without ``--scenario``/``--config``.
RUN_SCENARIOS: dict = {
    "gather_trade_build": (
        default_config,
        "Foundation's canonical Gather-Trade-Build economy (4 agents, 25x25 quadrant "
        "map, 1000 steps), uniformly random valid actions",
    ),
    "covid19": (
        _covid_config,
        "Foundation's COVID-19 and economy config (51 US states + the federal government, "
        "from 2020-03-22) with use_real_world_policies=True: the recorded state "
        "stringency levels and federal direct payments are replayed (the random actions "
        "are ignored) while the fitted model simulates infections, deaths and "
        "unemployment; 437 steps (days), the length of the record",
    ),
}


class ConfigError(ValueError):
    """A config file that cannot be read or has the wrong shape."""


def load_config(path) -> dict:
    """Read a Foundation-style env config from a YAML or JSON file.

    Accepts a flat dict with ``scenario_name`` or a dict whose ``env`` entry
    is such a dict (Foundation's RLlib tutorial ``config.yaml``).

    Raises:
        ConfigError: a missing file or a directory, an unreadable file, an
            unknown extension, unparsable content, or no ``scenario_name`` at
            the top level or under ``env:``.
    """
    path = pathlib.Path(path)
    if path.is_dir():
        raise ConfigError(f"config file {str(path)!r} is a directory: give a .yaml, .yml or .json file")
    if not path.exists():
        raise ConfigError(f"config file {str(path)!r} does not exist")
    if not path.is_file():
        raise ConfigError(f"config file {str(path)!r} is not a regular file")
    ext = path.suffix.lower()
    try:
        text = path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config file {str(path)!r}: {exc}") from None
    try:
        if ext in (".yaml", ".yml"):
            import yaml

            data = yaml.safe_load(text)
        elif ext == ".json":
            data = json.loads(text)
        else:
            raise ConfigError(
                f"config file {str(path)!r} must end in .yaml, .yml or .json, got {ext or 'no extension'!r}"
            )
    except ConfigError:
        raise
    except Exception as exc:  # yaml.YAMLError, json.JSONDecodeError
        raise ConfigError(f"cannot parse config file {str(path)!r}: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(
            f"config file {str(path)!r} must hold a mapping, got {type(data).__name__}"
        )
    if isinstance(data.get("env"), dict) and "scenario_name" in data["env"]:
        return dict(data["env"])
    if "scenario_name" in data:
        return dict(data)
    raise ConfigError(
        f"config file {str(path)!r} has no 'scenario_name', neither at the top level "
        "nor under an 'env:' block"
    )
