"""jaxecon: Foundation (the AI Economist's economic simulation) in JAX.

    import jax, jaxecon
    env = jaxecon.make("layout_from_file/simple_wood_and_stone",
                       components=[("Build", {}), ("Gather", {})],
                       n_agents=4, world_size=[25, 25], episode_length=1000)
    params = env.default_params
    obs, state = env.reset(jax.random.key(0), params)
    actions = env.sample_actions(jax.random.key(1), obs)
    obs, state, reward, done, info = env.step(jax.random.key(2), state, actions, params)

See ``jaxecon.foundation`` for Foundation's stateful object API.
``jaxecon.enable_persistent_cache()`` keeps the compiled programs on disk for
the next process (``jaxecon.compilation_cache``); nothing else in jaxecon
changes a process-wide JAX setting unasked.

``import jaxecon`` is cheap: it imports neither JAX nor any component. Each
public name below, and each submodule (``jaxecon.components``,
``jaxecon.wrappers``, ...), is imported on first access (PEP 562), so
``jaxecon --help`` answers without loading JAX. Importing the package
installs the registries' built-in loader and checks (``jaxecon.registries``;
the core imports nothing above it), so the registries fill themselves with
jaxecon's components, scenarios and entities the first time anything looks
into one, whatever was imported first (``jaxecon.core.registry``).
"""

from __future__ import annotations

import importlib
import importlib.util

__version__ = "0.1.0"

#: public name -> (module, attribute in it); imported on first access.
_LAZY: dict[str, tuple[str, str]] = {
    "EnvParams": ("jaxecon.core.state", "EnvParams"),
    "EnvState": ("jaxecon.core.state", "EnvState"),
    "validate_params": ("jaxecon.core.param_checks", "validate_params"),
    "agents": ("jaxecon.core.registry", "agent_registry"),
    "component_registry": ("jaxecon.core.registry", "component_registry"),
    "endogenous": ("jaxecon.core.registry", "endogenous_registry"),
    "landmarks": ("jaxecon.core.registry", "landmark_registry"),
    "resources": ("jaxecon.core.registry", "resource_registry"),
    "scenario_registry": ("jaxecon.core.registry", "scenario_registry"),
    "enable_persistent_cache": ("jaxecon.compilation_cache", "enable_persistent_cache"),
    "make": ("jaxecon.factory", "make"),
    "make_from_config": ("jaxecon.factory", "make_from_config"),
}

__all__ = sorted(_LAZY)


def __getattr__(name: str):
    """A public name of ``_LAZY`` or a submodule of jaxecon, imported now and kept.

    Raises:
        AttributeError: ``name`` is neither (as for any module attribute).
    """
    if name in _LAZY:
        module, attr = _LAZY[name]
        value = getattr(importlib.import_module(module), attr)
    elif not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


# Last: the wiring imports jaxecon.core.registry, a submodule of this package.
from jaxecon import registries as _registries  # noqa: E402,F401
