"""The annotated world picture (``jaxecon.render.world_figure``): title, legend, agents' indices.

Pictures are checked by content: on a world with a known layout, the pixels
at each cell show the colour the maps say, and the legend holds every
entity's colour and label.
"""

import numpy as np
import pytest

from jaxecon.render import (
    COLORS,
    agent_colors,
    draw_world,
    figure_to_rgb,
    legend_entries,
    render_world,
    render_world_annotated,
    source_block_color,
    world_figure,
    world_title,
)

H, W, S = 6, 8, 16


def _world():
    """A known layout: maps, the House owner map and two agents."""
    z = np.zeros((H, W))
    maps = {k: z.copy() for k in ("Wood", "Stone", "Water", "House", "WoodSourceBlock", "StoneSourceBlock")}
    maps["Wood"][0, 0] = 1
    maps["Stone"][0, 2] = 1
    maps["Water"][2, :] = 1
    maps["WoodSourceBlock"][5, 7] = 1
    maps["StoneSourceBlock"][5, 6] = 1
    owner = -np.ones((H, W), np.int16)
    for (r, c), o in (((4, 1), 0), ((4, 3), 1), ((4, 5), -1)):
        maps["House"][r, c] = 1
        owner[r, c] = o
    loc = np.array([[1, 4], [3, 6]])
    return maps, owner, loc


def _map_origin(fig):
    """(top row, left column) of the map's pixels in the figure."""
    box = fig.axes[0].get_window_extent()
    return int(round(fig.canvas.get_width_height()[1] - box.y1)), int(round(box.x0))


def _cell_centre(rgb, top, left, r, c):
    return rgb[top + r * S + S // 2 - 3, left + c * S + S // 2 - 3].astype(int)


@pytest.fixture(scope="module")
def picture():
    maps, owner, loc = _world()
    fig = world_figure(maps, owner, loc, timestep=7, env_index=3, episode=2, episode_length=10, scale=S)
    return fig, figure_to_rgb(fig)


def test_shape_title_and_map_pixels_where_the_maps_say(picture):
    fig, rgb = picture
    assert rgb.dtype == np.uint8 and rgb.ndim == 3 and rgb.shape[2] == 3
    assert rgb.shape[0] % 16 == 0 and rgb.shape[1] % 16 == 0
    assert rgb.shape[0] >= H * S and rgb.shape[1] > W * S + 100  # room for the legend
    assert fig._suptitle.get_text() == "env 3, episode 2, timestep 7 of 10"
    top, left = _map_origin(fig)
    pal = agent_colors(2)
    expect = {
        (0, 0): COLORS["Wood"], (0, 2): COLORS["Stone"], (2, 3): COLORS["Water"],
        (4, 1): pal[0], (4, 3): pal[1], (4, 5): COLORS["House"],
        (5, 7): source_block_color("Wood"), (5, 6): source_block_color("Stone"),
        (3, 0): COLORS["background"],
    }
    for (r, c), color in expect.items():
        np.testing.assert_array_equal(_cell_centre(rgb, top, left, r, c), color, err_msg=str((r, c)))
    # the map is render_world's raster pixel for pixel, but around the agents' labels and at the frame
    maps, owner, loc = _world()
    raw = render_world(maps, owner, loc, scale=S)
    block = rgb[top:top + H * S, left:left + W * S]
    same = (block == raw).all(-1)
    agent_cells = np.zeros((H, W), bool)  # the agents' cells and their neighbours (the index is larger)
    for r, c in loc:
        agent_cells[max(r - 1, 0):r + 2, max(c - 1, 0):c + 2] = True
    inner = np.ones_like(same)
    inner[[0, 1, -2, -1], :] = inner[:, [0, 1, -2, -1]] = False  # the axes' frame line
    away = ~np.repeat(np.repeat(agent_cells, S, 0), S, 1) & inner
    assert same[away].all()
    # each agent's index is written over it in its colour, outlined in black and white
    for i, (r, c) in enumerate(loc):
        cell = block[r * S:(r + 1) * S, c * S:(c + 1) * S].reshape(-1, 3)
        for color in (pal[i], (0, 0, 0), (255, 255, 255)):
            assert (cell == color).all(-1).sum() >= 5, (i, color)
    assert [t.get_text() for t in fig.axes[0].texts] == ["0", "1"]


def test_legend_lists_every_entity_with_its_colour(picture):
    fig, rgb = picture
    legend = fig.axes[0].get_legend()
    labels = [t.get_text() for t in legend.get_texts()]
    assert labels == ["Wood", "Stone", "Wood source block (Wood regrows)", "Stone source block (Stone regrows)",
                      "Water (cannot be entered)", "House without owner",
                      "agent 0 and its houses", "agent 1 and its houses"]
    top, left = _map_origin(fig)
    legend_px = rgb[:, left + W * S + 4:].reshape(-1, 3)
    for color in (COLORS["Wood"], COLORS["Stone"], COLORS["Water"], COLORS["House"], source_block_color("Wood"),
                  source_block_color("Stone"), *agent_colors(2)):
        assert (legend_px == color).all(-1).sum() >= 20, color
    # agents are listed by their index, as on the map
    digits = [h for h in legend.legend_handles if getattr(h, "get_text", None)]
    assert [d.get_text() for d in digits] == ["0", "1"]
    # the legend's face is the map's background, so that agents' white borders show
    assert (legend_px == COLORS["background"]).all(-1).sum() > 1000


def test_legend_entries_follow_the_layers_present():
    handles, labels = legend_entries(3, ("Wood", "Water"))
    assert labels == ["Wood", "Water (cannot be entered)", "agent 0", "agent 1", "agent 2"]
    assert len(handles) == len(labels)
    _, labels = legend_entries(0, ("House",), unowned_house=True)
    assert labels == ["House without owner"]
    maps, owner, loc = _world()
    maps["House"][4, 5] = 0  # no unowned house left: no entry for it
    fig = world_figure(maps, owner, loc, scale=4)
    assert "House without owner" not in [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert fig._suptitle.get_text() == "world"


def test_agents_are_drawn_as_coloured_indices():
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    maps, owner, loc = _world()
    fig = Figure(figsize=(1.5, 1.2), dpi=100)
    FigureCanvasAgg(fig)
    image, labels = draw_world(fig.add_subplot(), maps, owner, loc, scale=4)
    assert [t.get_text() for t in labels] == ["0", "1"]
    pal = agent_colors(2) / 255.0
    for i, t in enumerate(labels):
        np.testing.assert_allclose(t.get_color(), pal[i])
        assert t.get_position() == (loc[i, 1], loc[i, 0])
    _, labels = draw_world(fig.add_subplot(), maps, owner, np.array([[-1, -1], [0, 0]]), scale=4)
    assert [t.get_visible() for t in labels] == [False, True]
    assert image.get_array().shape == (H * 4, W * 4, 3)


def test_world_title_parts():
    assert world_title(5) == "timestep 5"
    assert world_title(5, 0, episode_length=9) == "env 0, timestep 5 of 9"
    assert world_title(env_index=1, episode=4) == "env 1, episode 4"


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: render_world_annotated(_world()[0], dpi=0), "dpi"),
        (lambda: render_world_annotated(_world()[0], scale=0), "scale"),
        (lambda: render_world_annotated(_world()[0], loc=np.array([[H, 0]])), "loc"),
        (lambda: render_world_annotated({}), "maps"),
        (lambda: legend_entries(-1), "n_agents"),
        (lambda: source_block_color("Coin"), "resource"),
    ],
)
def test_bad_input_is_a_value_error_naming_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
