"""Map files of ``layout_from_file``: jaxecon reads every map Foundation reads as Foundation does.

Foundation's format (``layout_from_file.py``): ``text.split(";")``, row r's c-th
character is tile (r, c), "W" wood, "S" stone, "@" water. The valid cases are
compared with the reference's parsed ``_source_maps`` (the reference only opens
``<package>/map_txt/<name>``, so it is given a relative path to the test's
file); the others must raise a ``ValueError`` that says what the format is.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

import jaxecon
from jaxecon.scenarios.simple_wood_and_stone.layout_from_file import available_layouts, parse_layout, read_layout

from reference import load_foundation, make_reference_env

ROWS = ["WWWW@WW ", " WW @ WW", "SW S@ S ", "S   @   ", "@@ @@@ @", " S  @   ", "S S @   ", "S   @   "]
BLANK_LAST = ROWS[:-1] + ["        "]

#: Valid 8x8 map files (name -> text).
VALID = {
    "trailing_semicolon": ";".join(ROWS) + ";",
    "no_trailing_semicolon": ";".join(ROWS),
    "blank_last_row": ";".join(BLANK_LAST) + ";",
    "blank_last_row_no_trailing_semicolon": ";".join(BLANK_LAST),
    "blank_last_row_semicolon_newline": ";".join(BLANK_LAST) + ";\n",  # as the shipped 9x9 file ends
    "blank_last_row_crlf": ";".join(BLANK_LAST) + ";\r\n",
    "blank_last_row_then_blank_piece": ";".join(BLANK_LAST) + ";  ",  # Foundation ignores a 9th blank row
    "short_rows": ";".join(r.rstrip() for r in ROWS) + ";",  # widest row still 8 wide
}


def _reference_maps(path):
    """Foundation's ``_source_maps`` for the 8x8 map file at ``path``."""
    load_foundation()
    import sys

    pkg = os.path.dirname(sys.modules["ai_economist.foundation.scenarios.simple_wood_and_stone.layout_from_file"].__file__)
    return _reference_env(os.path.relpath(path, os.path.join(pkg, "map_txt")), [8, 8])._source_maps


def _reference_env(name, world_size):
    return make_reference_env({
        "scenario_name": "layout_from_file/simple_wood_and_stone", "env_layout_file": name,
        "world_size": world_size, "n_agents": 2, "episode_length": 2, "components": [("Gather", {})],
    })


def _jaxecon_env(name, world_size):
    return jaxecon.make("layout_from_file/simple_wood_and_stone", env_layout_file=name, world_size=world_size,
                        n_agents=2, episode_length=2, components=[("Gather", {})])


@pytest.mark.reference
@pytest.mark.parametrize("case", list(VALID))
def test_valid_map_files_read_as_foundation_reads_them(case, tmp_path):
    path = tmp_path / f"{case}.txt"
    path.write_bytes(VALID[case].encode())
    want = _reference_maps(str(path))
    got = _jaxecon_env(str(path), [8, 8]).source_maps
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=k)
    assert want["Wood"].sum() > 0 and want["Water"].sum() > 0


@pytest.mark.reference
@pytest.mark.parametrize("name", available_layouts())
def test_shipped_map_files_match_foundation(name):
    """Byte for byte Foundation's files, and parsed alike at their true sizes (the
    "8x8" quadrant file is a 9x9 grid in both packages)."""
    load_foundation()
    import sys

    pkg = os.path.dirname(sys.modules["ai_economist.foundation.scenarios.simple_wood_and_stone.layout_from_file"].__file__)
    with open(os.path.join(pkg, "map_txt", name)) as f:
        assert f.read() == read_layout(name)
    rows = [r for r in read_layout(name).rstrip("\n").split(";") if r]
    size = [len(rows), max(len(r) for r in rows)]
    if name == "quadrant_8x8_4each_8clump.txt":
        assert size == [9, 9]
    want = _reference_env(name, size)._source_maps
    got = parse_layout(read_layout(name), size, name)
    for k in want:
        np.testing.assert_array_equal(got[k], want[k], err_msg=f"{name} {k}")


@pytest.mark.reference
def test_malformed_map_files_name_the_format(tmp_path):
    """Newline-separated rows, line breaks inside rows, a wrong size: Foundation
    fails with an IndexError (or silently shifts rows); jaxecon says what the
    format is."""
    lines = tmp_path / "newline_separated.txt"
    lines.write_text("\n".join(ROWS) + "\n")
    with pytest.raises(ValueError, match="separates its rows by line breaks; a map file holds its rows separated by ';'"):
        _jaxecon_env(str(lines), [8, 8])
    semi_lines = tmp_path / "semicolon_newline_separated.txt"
    semi_lines.write_text(";\n".join(r[:7] + " " for r in ROWS) + ";\n")
    with pytest.raises(ValueError, match=r"row 1 holds a line break .* separated by ';'"):
        _jaxecon_env(str(semi_lines), [8, 8])
    # Foundation reads each line break as a tile: rows 1.. silently shift right by one
    shifted = _reference_maps(str(semi_lines))["Wood"]
    assert shifted[1, 2] == 1 and shifted[1, 1] == 0
    with pytest.raises(ValueError, match=r"is 9x9 but world_size is \[8, 8\]; pass world_size=\[9, 9\] \(a map file"):
        _jaxecon_env("quadrant_8x8_4each_8clump.txt", [8, 8])
    with pytest.raises(IndexError):
        _reference_env("quadrant_8x8_4each_8clump.txt", [8, 8])
    extra_blank = tmp_path / "two_trailing_blank_rows.txt"
    extra_blank.write_text(";".join(ROWS) + ";        ;")
    with pytest.raises(ValueError, match=r"is 9x8 but world_size is \[8, 8\]; pass world_size=\[9, 8\]"):
        _jaxecon_env(str(extra_blank), [8, 8])
