"""Tests for jaxecon.render (pure numpy/matplotlib; no reference needed)."""

import numpy as np
import pytest

from jaxecon.render import COLORS, agent_colors, render_world, save_png

H, W, S = 6, 8, 8


def _maps():
    z = np.zeros((H, W))
    wood, stone, water, house = z.copy(), z.copy(), z.copy(), z.copy()
    wood[0, 0] = 1
    stone[0, 1] = 1
    water[2, :] = 1
    house[4, 4] = 1
    house[4, 5] = 1
    src = z.copy()
    src[5, 7] = 1
    return {"Wood": wood, "Stone": stone, "Water": water, "House": house,
            "WoodSourceBlock": src, "StoneSourceBlock": z.copy()}


def _owner():
    o = -np.ones((H, W), np.int16)
    o[4, 4] = 0
    o[4, 5] = 1
    return o


def _cell(rgb, r, c, scale=S):
    """Colour at the centre of cell (r, c)."""
    return rgb[r * scale + scale // 2, c * scale + scale // 2].astype(int)


def test_shape_and_dtype():
    rgb = render_world(_maps(), _owner(), np.array([[1, 1], [3, 6]]), scale=S)
    assert rgb.shape == (H * S, W * S, 3)
    assert rgb.dtype == np.uint8
    assert render_world(_maps(), None, None, scale=1).shape == (H, W, 3)


def test_layer_colours():
    loc = np.array([[1, 1], [3, 6]])
    rgb = render_world(_maps(), _owner(), loc, scale=S)
    bg = _cell(rgb, 5, 0)
    np.testing.assert_array_equal(bg, COLORS["background"])
    r, g, b = _cell(rgb, 2, 3)  # water
    assert b > 200 and b > r + 100 and b > g + 100
    np.testing.assert_array_equal(_cell(rgb, 0, 1), COLORS["Stone"])
    wood = rgb[0:S, 0:S].reshape(-1, 3).astype(int)
    assert (wood == COLORS["Wood"]).all(axis=1).mean() > 0.5
    # a source block is tinted, but is not the resource itself
    src = _cell(rgb, 5, 7)
    assert not np.array_equal(src, bg) and not np.array_equal(src, COLORS["Wood"])
    # houses take their owner's colour, and differ between owners
    pal = agent_colors(2)
    np.testing.assert_array_equal(_cell(rgb, 4, 4), pal[0])
    np.testing.assert_array_equal(_cell(rgb, 4, 5), pal[1])
    # agents: their colour in the middle, differing from the background
    for i, (ar, ac) in enumerate(loc):
        np.testing.assert_array_equal(_cell(rgb, ar, ac), pal[i])
        assert not np.array_equal(_cell(rgb, ar, ac), bg)


def test_unowned_house_and_missing_maps():
    maps = {"House": _maps()["House"]}
    rgb = render_world(maps, None, None, scale=4)
    np.testing.assert_array_equal(_cell(rgb, 4, 4, 4), COLORS["House"])
    # Foundation's dense-log House form {"owner", "health"} works too
    rgb2 = render_world({"House": {"owner": _owner(), "health": maps["House"]}}, scale=4)
    np.testing.assert_array_equal(_cell(rgb2, 4, 4, 4), agent_colors(2)[0])
    # only an owner map: world shape comes from it
    assert render_world({}, _owner(), None, scale=2).shape == (2 * H, 2 * W, 3)


def test_unplaced_agents_skipped():
    a = render_world(_maps(), None, np.array([[-1, -1]]), scale=4)
    b = render_world(_maps(), None, None, scale=4)
    np.testing.assert_array_equal(a, b)


def test_accepts_float_health_and_clips():
    maps = _maps()
    maps["Wood"] = maps["Wood"] * 3.0  # health above 1 is drawn as full
    rgb = render_world(maps, scale=S)
    np.testing.assert_array_equal(_cell(rgb, 0, 0), _cell(render_world(_maps(), scale=S), 0, 0))


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(maps={"Wood": np.zeros((H, W, 2))}), "maps['Wood']"),
        (dict(maps={"Wood": np.zeros((H, W)), "Stone": np.zeros((H, W + 1))}), "maps['Stone']"),
        (dict(maps=_maps(), owner=np.zeros((H + 1, W), int)), "owner"),
        (dict(maps=_maps(), loc=np.zeros((3, 3), int)), "loc"),
        (dict(maps=_maps(), loc=np.array([0, 1])), "loc"),
        (dict(maps=_maps(), loc=np.array([[H, 0]])), "loc"),
        (dict(maps=_maps(), scale=0), "scale"),
        (dict(maps={}), "maps"),
    ],
)
def test_bad_inputs_raise_value_error_naming_argument(kwargs, name):
    with pytest.raises(ValueError) as err:
        render_world(**kwargs)
    assert name in str(err.value)


def test_save_png_roundtrip(tmp_path):
    import matplotlib.image

    rgb = render_world(_maps(), _owner(), np.array([[1, 1]]), scale=4)
    path = save_png(rgb, tmp_path / "w.png")
    back = matplotlib.image.imread(path)
    assert back.shape[:2] == rgb.shape[:2]
    np.testing.assert_array_equal(np.round(back[..., :3] * 255).astype(np.uint8), rgb)
    with pytest.raises(ValueError, match="rgb"):
        save_png(rgb.astype(np.float32), tmp_path / "x.png")
