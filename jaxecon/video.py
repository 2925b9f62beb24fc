"""Episode videos of the world: the annotated map (``jaxecon.render.world_figure``) frame by frame.

:func:`world_frames` draws the frames: the figure (map, title, legend) is
laid out once, then each frame redraws only the map, the agents' index
labels and the title (matplotlib blitting), so a frame costs a few
milliseconds. :func:`write_video` encodes frames with imageio: MP4 (H.264,
through the ``imageio-ffmpeg`` binary) or GIF (Pillow); when ``imageio-ffmpeg``
is missing an MP4 request falls back to a GIF beside it, with a warning.
:func:`write_world_video` does both for per-timestep maps (what ``jaxecon
run`` records of env 0), :func:`write_episode_video` for a dense log.

Example::

    from jaxecon.plotting import load_dense_log
    from jaxecon.video import write_episode_video
    write_episode_video(load_dense_log("runs/x/dense_log.json"), "episode.mp4")
"""

from __future__ import annotations

import importlib.util
import os
import warnings

import numpy as np

from jaxecon.render import render_world, world_figure, world_title

__all__ = ["VIDEO_FORMATS", "episode_frames_from_dense_log", "world_frames", "write_episode_video",
           "write_video", "write_world_video"]

#: File formats :func:`write_video` writes (the path's suffix, without the dot).
VIDEO_FORMATS = ("mp4", "gif")


def _check_positive(name, value, kind=int):
    ok = not isinstance(value, bool) and isinstance(value, (int, np.integer) if kind is int else (int, float, np.number))
    if not ok or value <= 0:
        raise ValueError(f"{name} must be a positive {'int' if kind is int else 'number'}, got {value!r}")


def _frame_maps(maps: dict, t: int) -> dict:
    return {k: v[t] for k, v in maps.items()}


def world_frames(maps: dict, owner=None, loc=None, *, timesteps=None, env_index=None, episode=None,
                 episode_length=None, scale: int = 8, dpi: int = 100):
    """Yield the annotated frames of a sequence of worlds.

    Args:
        maps: ``{name: array [F, H, W]}`` (``jaxecon.render.MAP_NAMES``), F frames.
        owner: int array ``[F, H, W]`` House owners (-1 = nobody), or None.
        loc: int array ``[F, n, 2]`` agents' ``[row, col]``, or None.
        timesteps: int ``[F]`` timestep of each frame (default ``0..F-1``).
        env_index, episode, episode_length: the title's parts (``world_title``).
        scale: pixels per cell; dpi: as ``jaxecon.render.world_figure``.

    Yields:
        uint8 ``[height, width, 3]`` frames, all one shape (multiples of 16),
        laid out like ``world_figure`` of the last frame (whose houses fix the
        legend).

    Raises:
        ValueError: no maps, sequences of different lengths, or what
            ``render_world`` rejects.
    """
    if not isinstance(maps, dict) or not maps:
        raise ValueError("maps must be a non-empty dict {name: [frames, H, W]}")
    maps = {k: np.asarray(v) for k, v in maps.items()}
    n_frames = {k: v.shape[0] if v.ndim == 3 else None for k, v in maps.items()}
    if any(f is None for f in n_frames.values()) or len(set(n_frames.values())) != 1:
        raise ValueError(f"every map must be [frames, H, W] with one frame count, got "
                         f"{ {k: v.shape for k, v in maps.items()} }")
    count = next(iter(n_frames.values()))
    for name, seq in (("owner", owner), ("loc", loc), ("timesteps", timesteps)):
        if seq is not None and len(seq) != count:
            raise ValueError(f"{name} has {len(seq)} frames but maps have {count}")
    owner = None if owner is None else np.asarray(owner)
    loc = None if loc is None else np.asarray(loc)
    timesteps = np.arange(count) if timesteps is None else np.asarray(timesteps)
    if count == 0:
        return

    last = count - 1
    fig = world_figure(_frame_maps(maps, last), None if owner is None else owner[last],
                       None if loc is None else loc[last], timestep=int(timesteps[last]),
                       env_index=env_index, episode=episode, episode_length=episode_length,
                       scale=scale, dpi=dpi)
    canvas, ax = fig.canvas, fig.axes[0]
    image, labels, title = ax.images[0], list(ax.texts), fig._suptitle
    sprites = [_text_sprite(text, dpi) for text in labels]
    for artist in (image, *labels):
        artist.set_visible(False)  # the map and the labels are pasted into the pixel buffer
    # The title: its start (all but the timestep) is drawn once; the timestep
    # and " of T" are pasted from sprites of the digits and of the suffix.
    fig_h = canvas.get_width_height()[1]
    prefix = world_title(None, env_index, episode)
    prefix = ("" if prefix == "world" else prefix + ", ") + "timestep"
    title.set_text(prefix)
    renderer = canvas.get_renderer()
    title.set_text(prefix + " 0")
    x_number = title.get_window_extent(renderer).x1 - _text_width(title, "0", renderer)
    digits = [_text_sprite(title, dpi, str(d)) for d in range(10)]
    digit_w = _text_width(title, "0000000000", renderer) / 10
    suffix = None if episode_length is None else _text_sprite(title, dpi, f" of {int(episode_length)}")
    title.set_text(prefix)
    canvas.draw()
    background = np.array(canvas.buffer_rgba())[..., :3]
    box = ax.get_window_extent()
    top, left = int(round(fig_h - box.y1)), int(round(box.x0))
    anchor_row = fig_h - title.get_transform().transform(title.get_position())[1]  # the title's alignment point
    for t in range(count):
        frame = background.copy()
        frame_loc = None if loc is None else loc[t]
        raster = render_world(_frame_maps(maps, t), None if owner is None else owner[t], frame_loc,
                              scale=scale)
        # the map's pixels (the axes' 1-pixel frame stays as drawn)
        frame[top + 1:top + raster.shape[0] - 1, left + 1:left + raster.shape[1] - 1] = raster[1:-1, 1:-1]
        for (rgb, alpha, (ay, ax_)), (r, c) in zip(sprites, [] if frame_loc is None else frame_loc):
            if r >= 0 and c >= 0:
                _paste(frame, rgb, alpha, top + int((r + 0.5) * scale) - ay, left + int((c + 0.5) * scale) - ax_)
        x = x_number
        for ch in str(int(timesteps[t])):
            rgb, alpha, (ay, ax_) = digits[int(ch)]
            _paste(frame, rgb, alpha, int(round(anchor_row)) - ay, int(round(x)) - ax_)
            x += digit_w
        if suffix is not None:
            rgb, alpha, (ay, ax_) = suffix
            _paste(frame, rgb, alpha, int(round(anchor_row)) - ay, int(round(x)) - ax_)
        yield frame


def _text_width(text, string, renderer) -> float:
    """Width in pixels of ``string`` in ``text``'s font."""
    from matplotlib.text import Text

    probe = Text(0, 0, string, fontproperties=text.get_fontproperties())
    probe.set_figure(text.get_figure())
    return probe.get_window_extent(renderer).width


def _text_sprite(text, dpi, string=None):
    """``(rgb float [h, w, 3], alpha float [h, w, 1], (row, col) of the anchor)``: ``string``
    (default ``text``'s own) in ``text``'s font, colour, alignment and path effects, drawn alone.

    The anchor is the pixel of the text's position (its alignment point).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    string = text.get_text() if string is None else string
    size = 2 * int(np.ceil(text.get_fontsize() * (len(string) + 2) * dpi / 72)) + 8
    fig = Figure(figsize=(size / dpi, size / dpi), dpi=dpi)
    canvas = FigureCanvasAgg(fig)
    fig.patch.set_alpha(0.0)
    fig.text(0.5, 0.5, string, ha=text.get_ha(), va=text.get_va(),
             fontproperties=text.get_fontproperties(), color=text.get_color(),
             path_effects=text.get_path_effects())
    canvas.draw()
    rgba = np.array(canvas.buffer_rgba())
    rows, cols = np.nonzero(rgba[..., 3])
    r0, r1, c0, c1 = rows.min(), rows.max() + 1, cols.min(), cols.max() + 1
    crop = rgba[r0:r1, c0:c1]
    return crop[..., :3].astype(np.float32), crop[..., 3:].astype(np.float32) / 255.0, (size // 2 - r0, size // 2 - c0)


def _paste(frame, rgb, alpha, row, col):
    """Alpha-composite a sprite into ``frame`` with its top-left at (row, col), clipped to the frame."""
    h, w = frame.shape[:2]
    r0, c0 = max(row, 0), max(col, 0)
    r1, c1 = min(row + rgb.shape[0], h), min(col + rgb.shape[1], w)
    if r0 >= r1 or c0 >= c1:
        return
    src = (slice(r0 - row, r1 - row), slice(c0 - col, c1 - col))
    a = alpha[src]
    region = frame[r0:r1, c0:c1]
    region[...] = np.round(a * rgb[src] + (1.0 - a) * region).astype(np.uint8)


def _ffmpeg_available() -> bool:
    return importlib.util.find_spec("imageio_ffmpeg") is not None


def write_video(frames, path, *, fps: float = 20) -> str:
    """Encode ``frames`` into a video file; the format is ``path``'s suffix.

    ``.mp4``: H.264 (yuv420p) through imageio's ffmpeg plugin; frame sides
    must be multiples of 16 (``world_frames`` makes them so), else ffmpeg's
    plugin resizes them. Without ``imageio-ffmpeg`` installed the frames go
    into a GIF of the same name (``.gif``) instead, with a ``UserWarning``.
    ``.gif``: Pillow, looping, ``1000 / fps`` ms per frame (GIF keeps
    hundredths of a second); the frames are held in memory until written.

    Args:
        frames: iterable of uint8 ``[height, width, 3]`` arrays, one shape.
        path: output file (``.mp4`` or ``.gif``); its directory must exist.
        fps: frames per second, > 0.

    Returns:
        The path written (``str``; the ``.gif`` one after a fallback).

    Raises:
        ValueError: an unknown suffix (names ``VIDEO_FORMATS``), a missing
            directory, a bad ``fps``, no frames, or frames of another shape
            or dtype.
    """
    import imageio

    path = os.fspath(path)
    fmt = os.path.splitext(path)[1].lower().lstrip(".")
    if fmt not in VIDEO_FORMATS:
        raise ValueError(f"path {path!r}: unknown video format {fmt!r}; the allowed suffixes are "
                         f"{['.' + f for f in VIDEO_FORMATS]}")
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        raise ValueError(f"path {path!r}: the directory {parent!r} does not exist")
    _check_positive("fps", fps, float)
    if fmt == "mp4" and not _ffmpeg_available():
        path = os.path.splitext(path)[0] + ".gif"
        warnings.warn(f"imageio-ffmpeg is not installed, so the video is a GIF: {path} "
                      "(pip install imageio-ffmpeg for MP4)", UserWarning, stacklevel=2)
        fmt = "gif"

    with warnings.catch_warnings():
        # imageio-ffmpeg starts the ffmpeg binary (at the first frame) with
        # subprocess, fork and exec at once, which JAX's fork warning does not concern
        warnings.filterwarnings("ignore", message=r"os\.fork\(\) was called", category=RuntimeWarning)
        count = _encode(imageio, frames, path, fmt, float(fps))
    if count == 0:
        if os.path.exists(path):
            os.remove(path)
        raise ValueError("frames is empty: a video needs at least one frame")
    return path


def _encode(imageio, frames, path, fmt, fps) -> int:
    """Append ``frames`` to a new ``fmt`` file at ``path``; returns the frame count."""
    if fmt == "mp4":
        writer = imageio.get_writer(path, format="FFMPEG", mode="I", fps=fps, codec="libx264",
                                    pixelformat="yuv420p", quality=7, macro_block_size=16,
                                    ffmpeg_log_level="error")
    else:
        writer = _GifWriter(path, fps)
    shape, count = None, 0
    try:
        for frame in frames:
            frame = np.asarray(frame)
            if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 3:
                raise ValueError(f"frames must be uint8 [height, width, 3], got {frame.dtype} {frame.shape}")
            if shape is None:
                shape = frame.shape
            elif frame.shape != shape:
                raise ValueError(f"frame {count} has shape {frame.shape}, the first {shape}")
            writer.append_data(frame)
            count += 1
    finally:
        writer.close()
    return count


class _GifWriter:
    """A looping GIF through Pillow: frames kept (as Pillow images) until ``close``."""

    def __init__(self, path, fps):
        self.path, self.duration_ms, self.frames = path, 1000.0 / fps, []

    def append_data(self, frame):
        from PIL import Image

        self.frames.append(Image.fromarray(frame))

    def close(self):
        if self.frames:
            self.frames[0].save(self.path, format="GIF", save_all=True, append_images=self.frames[1:],
                                duration=self.duration_ms, loop=0)


def write_world_video(path, maps: dict, owner=None, loc=None, *, timesteps=None, env_index=None,
                      episode=None, episode_length=None, fps: float = 20, scale: int = 8,
                      dpi: int = 100) -> str:
    """:func:`world_frames` of the arguments, written by :func:`write_video`.

    Returns:
        The path written. Raises: as the two.
    """
    frames = world_frames(maps, owner, loc, timesteps=timesteps, env_index=env_index, episode=episode,
                          episode_length=episode_length, scale=scale, dpi=dpi)
    return write_video(frames, path, fps=fps)


def episode_frames_from_dense_log(dense_log, every: int = 1) -> dict:
    """The arguments of :func:`world_frames` for timesteps ``0, every, 2 every, ..`` (and T) of a dense log.

    A dense log snapshots the world only every ``world_dense_log_frequency``
    timesteps; a frame between snapshots shows the latest snapshot's maps
    with the agents where they are at its timestep.

    Returns:
        ``{"maps": {name: float [F, H, W]}, "owner": int [F, H, W] or None,
        "loc": int [F, n, 2], "timesteps": int [F]}``.

    Raises:
        ValueError: not a dense log, or ``every`` is not an int >= 1.
    """
    from jaxecon.plotting.logs import check_dense_log, n_agents

    check_dense_log(dense_log)
    _check_positive("every", every)
    world, states = dense_log["world"], dense_log["states"]
    last = len(world) - 1
    ts = list(range(0, last + 1, every))
    if ts[-1] != last:
        ts.append(last)
    n = n_agents(dense_log)
    maps, owner, locs, snap = {}, [], [], None
    for t in range(last + 1):
        if world[t]:
            snap = world[t]
        if t not in ts[len(locs):len(locs) + 1]:
            continue
        if snap is None:
            raise ValueError(f"dense_log['world'] has no snapshot at or before timestep {t}")
        for k, v in snap.items():
            health = v["health"] if isinstance(v, dict) else v
            maps.setdefault(k, []).append(np.asarray(health, np.float64))
        house = snap.get("House")
        owner.append(np.asarray(house["owner"], np.int64) if isinstance(house, dict) else None)
        locs.append([states[t][str(i)]["loc"] for i in range(n)])
    has_owner = all(o is not None for o in owner)
    return {
        "maps": {k: np.stack(v) for k, v in maps.items()},
        "owner": np.stack(owner) if has_owner else None,
        "loc": np.asarray(locs, np.int64).reshape(len(ts), n, 2),
        "timesteps": np.asarray(ts, np.int64),
    }


def write_episode_video(dense_log, path, *, every: int = 1, fps: float = 20, scale: int = 8,
                        dpi: int = 100) -> str:
    """A video of a dense log's episode (:func:`episode_frames_from_dense_log`, :func:`write_world_video`).

    The title carries the log's ``env_index`` and ``episode`` when it has them.

    Returns:
        The path written. Raises: as the two.
    """
    frames = episode_frames_from_dense_log(dense_log, every)
    return write_world_video(path, frames["maps"], frames["owner"], frames["loc"],
                             timesteps=frames["timesteps"], env_index=dense_log.get("env_index"),
                             episode=dense_log.get("episode"), episode_length=len(dense_log["states"]) - 1,
                             fps=fps, scale=scale, dpi=dpi)
