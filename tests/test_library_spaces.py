"""The fronts hand out gymnax's and JaxMARL's own space classes, with jaxecon's bounds.

Training code checks spaces with ``isinstance`` against its library's
classes (PureJaxRL's ``FlattenObservationWrapper``, JaxMARL's
``CTRolloutManager``); these tests hold the conversion and what such code
asserts.
"""

from __future__ import annotations

import numpy as np
import pytest

from jaxecon import spaces
from jaxecon.wrappers import library_spaces
from jaxecon.wrappers.library_spaces import library_spaces_module, to_library_space

BOX = spaces.Box(np.array([0.0, -1.0], np.float32), np.array([1.0, 5.0], np.float32), (2,))


@pytest.mark.parametrize("library", ["gymnax", "jaxmarl"])
def test_each_space_becomes_the_library_class_with_the_same_bounds(library):
    mod = pytest.importorskip(library_spaces.LIBRARIES[library])
    box = to_library_space(BOX, library)
    assert type(box) is mod.Box and box.shape == (2,) and np.dtype(box.dtype) == np.float32
    assert np.array_equal(box.low, BOX.low) and np.array_equal(box.high, BOX.high)
    disc = to_library_space(spaces.Discrete(50), library)
    assert type(disc) is mod.Discrete and disc.n == 50
    nested = to_library_space(spaces.Dict({"obs": BOX, "k": spaces.Discrete(3)}), library)
    assert type(nested) is mod.Dict and type(nested.spaces["obs"]) is mod.Box
    assert type(nested.spaces["k"]) is mod.Discrete and nested.spaces["k"].n == 3
    multi = to_library_space(spaces.MultiDiscrete([22, 22, 3]), library)
    if library == "jaxmarl":
        assert type(multi) is mod.MultiDiscrete and np.array_equal(multi.num_categories, [22, 22, 3])
    else:  # gymnax has no MultiDiscrete: jaxecon's is kept
        assert isinstance(multi, spaces.MultiDiscrete) and np.array_equal(multi.nvec, [22, 22, 3])


def test_a_missing_library_keeps_jaxecons_space(monkeypatch):
    monkeypatch.setitem(library_spaces._MODULES, "gymnax", None)
    assert to_library_space(BOX, "gymnax") is BOX


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="library must be one of"):
        to_library_space(BOX, "gym")
    with pytest.raises(TypeError, match="space must be a jaxecon.spaces space"):
        to_library_space((0, 1), "jaxmarl")


def test_purejaxrl_flatten_wrapper_assertion_holds(gymnax_front):
    """PureJaxRL's FlattenObservationWrapper asserts a gymnax Box before anything else."""
    gspaces = pytest.importorskip("gymnax.environments.spaces")
    space = gymnax_front.observation_space(gymnax_front.default_params)
    assert isinstance(space, gspaces.Box)
    flat = gspaces.Box(low=space.low, high=space.high, shape=(int(np.prod(space.shape)),), dtype=space.dtype)
    assert flat.shape == space.shape


@pytest.fixture(scope="module")
def gymnax_front():
    import jaxecon
    from jaxecon.configs import gather_build_config
    from jaxecon.wrappers import GymnaxEnv

    from common import two_agents

    return GymnaxEnv(jaxecon.make(**two_agents(gather_build_config())))


def test_library_module_is_none_when_absent(monkeypatch):
    monkeypatch.setitem(library_spaces._MODULES, "jaxmarl", None)
    assert library_spaces_module("jaxmarl") is None
