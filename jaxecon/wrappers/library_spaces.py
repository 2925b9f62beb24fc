"""jaxecon's spaces as gymnax's or JaxMARL's own space classes.

Training code written for gymnax or JaxMARL checks spaces with
``isinstance`` against its library's classes: PureJaxRL's
``FlattenObservationWrapper`` asserts a ``gymnax.environments.spaces.Box``;
JaxMARL's ``CTRolloutManager`` (the first thing its IQL, VDN, QMIX and PQN
baselines build) tests for ``jaxmarl.environments.spaces`` classes. So the
fronts hand out the library's classes when it is installed, with jaxecon's
bounds, shapes and dtypes (``jaxecon.spaces`` stays the bare env's, which
needs no optional library).

``to_library_space(space, library)`` converts, recursively through ``Dict``:

=================  ==================================  ==========================================
jaxecon            ``library="gymnax"``                ``library="jaxmarl"``
=================  ==================================  ==========================================
``Box``            ``gymnax...spaces.Box``             ``jaxmarl.environments.spaces.Box``
``Discrete``       ``gymnax...spaces.Discrete``        ``jaxmarl.environments.spaces.Discrete``
``MultiDiscrete``  kept (gymnax has no MultiDiscrete)  ``jaxmarl.environments.spaces.MultiDiscrete``
``Dict``           ``gymnax...spaces.Dict``            ``jaxmarl.environments.spaces.Dict``
=================  ==================================  ==========================================

When the library cannot be imported, the jaxecon space is returned as it is.
"""

from __future__ import annotations

import importlib

import numpy as np

from jaxecon import spaces as jx_spaces

__all__ = ["LIBRARIES", "library_spaces_module", "to_library_space"]

#: ``library`` values and the module holding each library's space classes.
LIBRARIES = {"gymnax": "gymnax.environments.spaces", "jaxmarl": "jaxmarl.environments.spaces"}

_MODULES: dict = {}


def library_spaces_module(library: str):
    """The space module of ``library`` (``LIBRARIES``), or None when it cannot be imported.

    Raises:
        ValueError: ``library`` is not one of ``LIBRARIES``.
    """
    if library not in LIBRARIES:
        raise ValueError(f"library must be one of {tuple(LIBRARIES)}, got {library!r}")
    if library not in _MODULES:
        try:
            _MODULES[library] = importlib.import_module(LIBRARIES[library])
        except ImportError:
            _MODULES[library] = None
    return _MODULES[library]


def to_library_space(space, library: str):
    """``space`` (a ``jaxecon.spaces`` space) as ``library``'s own class (table above).

    Args:
        space: a ``jaxecon.spaces`` ``Box``, ``Discrete``, ``MultiDiscrete`` or ``Dict``.
        library: ``"gymnax"`` or ``"jaxmarl"``.
    Returns:
        The library's space with the same bounds, shape and dtype (a ``Box``'s
        ``low``/``high`` as numpy arrays of its shape); ``space`` itself when
        the library is not installed or has no such class.
    Raises:
        ValueError: ``library`` is unknown.
        TypeError: ``space`` is not a ``jaxecon.spaces`` space.
    """
    mod = library_spaces_module(library)
    if not isinstance(space, jx_spaces.Space):
        raise TypeError(f"space must be a jaxecon.spaces space, got {type(space).__name__}")
    if mod is None:
        return space
    if isinstance(space, jx_spaces.Box):
        low = np.broadcast_to(np.asarray(space.low, space.dtype), space.shape)
        high = np.broadcast_to(np.asarray(space.high, space.dtype), space.shape)
        return mod.Box(low, high, tuple(space.shape), space.dtype)
    if isinstance(space, jx_spaces.Discrete):
        return mod.Discrete(space.n)
    if isinstance(space, jx_spaces.MultiDiscrete):
        multi = getattr(mod, "MultiDiscrete", None)
        return space if multi is None else multi([int(n) for n in space.nvec])
    if isinstance(space, jx_spaces.Dict):
        return mod.Dict({k: to_library_space(v, library) for k, v in space.spaces.items()})
    raise TypeError(f"space must be a jaxecon.spaces Box, Discrete, MultiDiscrete or Dict, "
                    f"got {type(space).__name__}")
