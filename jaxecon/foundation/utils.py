"""Foundation's ``foundation/utils.py``: saving and loading dense logs.

Follows ``ai_economist/foundation/utils.py`` of ai-economist 1.7.1: a dense
log is written as UTF-8 JSON inside an lz4 frame, the format of the files the
RLlib tutorial (``tutorials/rllib/utils/saving.py``) writes, so a log saved
by either package loads in the other. Needs the ``lz4`` package.
"""

from __future__ import annotations

import json


def _lz4_frame():
    try:
        import lz4.frame
    except ImportError as e:  # pragma: no cover - depends on the install
        raise ImportError(
            "saving/loading episode logs needs the lz4 package: pip install lz4"
        ) from e
    return lz4.frame


def save_episode_log(game_object, filepath, compression_level=16):
    """Write ``game_object.previous_episode_dense_log`` to ``filepath`` (lz4-compressed JSON).

    Args:
        game_object: an environment (``FoundationEnv``, or anything with a
            JSON-serialisable ``previous_episode_dense_log``).
        filepath: path of the file to write.
        compression_level: lz4 level, clipped to 0..16 (Foundation's default 16).
    Raises:
        TypeError: ``game_object`` has no ``previous_episode_dense_log``.
        ImportError: ``lz4`` is not installed.
    """
    if not hasattr(game_object, "previous_episode_dense_log"):
        raise TypeError(
            f"save_episode_log needs an environment with previous_episode_dense_log, "
            f"got {type(game_object).__name__}"
        )
    level = min(16, max(0, int(compression_level)))
    data = json.dumps(game_object.previous_episode_dense_log, ensure_ascii=False).encode("utf-8")
    with _lz4_frame().open(filepath, mode="wb", compression_level=level) as log_file:
        log_file.write(data)


def load_episode_log(filepath):
    """The dense log saved at ``filepath`` by ``save_episode_log`` (either package's).

    Returns:
        dict: ``{"world": [...], "states": [...], "actions": [...],
        "rewards": [...], <component logs>}`` of plain JSON values.
    Raises:
        ImportError: ``lz4`` is not installed.
    """
    with _lz4_frame().open(filepath, mode="rb") as log_file:
        return json.loads(log_file.read())


def verify_activation_code():
    """Foundation asks for an activation code before the COVID-19 scenario runs;
    jaxecon needs none, so this does nothing (kept so Foundation scripts that
    call it run unchanged)."""
