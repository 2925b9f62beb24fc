"""``jaxecon.make`` and ``jaxecon.make_from_config``: build an environment by name.

Mirrors ``ai_economist.foundation.make_env_instance``: the keyword arguments
are exactly Foundation's scenario and component kwargs.
"""

from __future__ import annotations

import inspect

from jaxecon.core.component import Component
from jaxecon.core.env import Economy
from jaxecon.core.scenario import parse_components
from jaxecon.core.registry import component_registry, scenario_registry


def allowed_kwargs(cls) -> list[str]:
    """The keyword arguments ``cls(...)`` accepts, sorted.

    Args:
        cls: a class, e.g. a ``Scenario`` or ``Component`` subclass.
    Returns:
        The names of the positional-or-keyword and keyword-only parameters
        of every ``__init__`` along ``cls.__mro__`` (a subclass that passes
        ``**kwargs`` up to its base accepts the base's too), without ``self``.
        ``make`` rejects any other keyword; ``jaxecon.checkpoint.static_config``
        records these.
    """
    names = set()
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            sig = inspect.signature(vars(klass)["__init__"])
            names |= {p.name for p in sig.parameters.values()
                      if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name != "self"}
    return sorted(names)


def make(scenario_name: str, **kwargs) -> Economy:
    """Build the scenario ``scenario_name`` with Foundation's keyword arguments.

    Args:
        scenario_name: a registered scenario name, e.g.
            ``"layout_from_file/simple_wood_and_stone"`` (case-insensitive).
        **kwargs: the scenario's and Foundation's ``BaseEnvironment``'s keyword arguments
            (``components``, ``n_agents``, ``world_size``, ``episode_length``, ...).
    Returns:
        The environment: an ``Economy`` of that scenario (``env.scenario``) and its components.
    Raises:
        KeyError: unknown scenario (lists the known ones) or component.
        TypeError: unknown keyword argument (lists the allowed ones), or a
            Foundation-style (numpy) component, which only the stateful shim
            (``jaxecon.foundation``) runs.
        ValueError: bad values (names the argument and the allowed values).

    Changes no process-wide JAX setting; ``jaxecon.enable_persistent_cache()``
    turns the persistent compilation cache on.
    """
    return build_scenario(scenario_registry.get(scenario_name), kwargs)


def build_scenario(cls, kwargs: dict, host_components: bool = False) -> Economy:
    """Build the scenario class ``cls`` with Foundation's keyword arguments ``kwargs``.

    Args:
        cls: a ``jaxecon.core.scenario.Scenario`` subclass (registered or not).
        kwargs: as ``make``'s.
        host_components: allow Foundation-style numpy components (their
            stand-ins have ``runs_on_host``); only the stateful shim, which
            runs their hooks between jitted calls, passes True.
    Raises:
        as ``make``.

    Changes no process-wide JAX setting: the persistent compilation cache is
    turned on by ``jaxecon.enable_persistent_cache()`` (``jaxecon.compilation_cache``).
    """
    allowed = allowed_kwargs(cls)
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise TypeError(
            f"unknown keyword argument(s) {unknown} for scenario {cls.name!r}; allowed: {allowed}"
        )
    env = Economy(cls(**kwargs))
    hosted = [c.name for c in env.components if c.runs_on_host]
    if hosted and not host_components:
        raise TypeError(
            f"components {hosted} are Foundation-style numpy components: they run in the "
            "stateful shim (jaxecon.foundation.make_env_instance), not in the functional API, "
            "which jits every component; port them to jaxecon.core.component.Component "
            "(docs/foundation_shim.md shows how)"
        )
    return env


def unknown_kwargs(env_config: dict) -> list[tuple[str, str, list[str]]]:
    """The keys of ``env_config`` that ``make_from_config`` rejects as unknown
    keyword arguments, found without building anything (a config checked at load time).

    Args:
        env_config: as ``make_from_config``'s.
    Returns:
        ``[(where, key, allowed), ...]`` in config order: ``where`` is ``""`` for
        a scenario keyword and ``"components[i].<Name>"`` for a keyword of the
        i-th component (jaxecon components; a Foundation-style numpy component
        checks its own when built); ``allowed`` is ``allowed_kwargs`` of that
        class (a component's without ``spec``, which the env passes).
    Raises:
        ValueError: ``env_config`` is not a dict with ``scenario_name``, or its
            ``components`` is not a list of ``(name, kwargs)`` / ``{name: kwargs}``.
        KeyError: an unknown scenario or component name (lists the known ones).
    """
    if not isinstance(env_config, dict) or "scenario_name" not in env_config:
        raise ValueError("env_config must be a dict with a 'scenario_name' key")
    allowed = allowed_kwargs(scenario_registry.get(env_config["scenario_name"]))
    out = [("", k, allowed) for k in env_config if k != "scenario_name" and k not in allowed]
    for i, (name, kwargs) in enumerate(parse_components(env_config.get("components", []))):
        cls = component_registry.get(name)
        if issubclass(cls, Component):
            ok = [k for k in allowed_kwargs(cls) if k != "spec"]
            out += [(f"components[{i}].{name}", k, ok) for k in kwargs if k not in ok]
    return out


def make_from_config(env_config: dict) -> Economy:
    """Build from the dict Foundation users pass to ``make_env_instance(**env_config)``.

    ``env_config["scenario_name"]`` names the scenario; every other key is a
    keyword argument of ``make``.

    Raises:
        ValueError: if ``env_config`` is not a dict or lacks ``scenario_name``;
            otherwise as ``make``.
    """
    if not isinstance(env_config, dict) or "scenario_name" not in env_config:
        raise ValueError("env_config must be a dict with a 'scenario_name' key")
    cfg = dict(env_config)
    return make(cfg.pop("scenario_name"), **cfg)
