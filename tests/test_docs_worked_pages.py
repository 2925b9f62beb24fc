"""The worked pages of docs/ run as written: every ```python block of a page,
in order, in one namespace (the blocks hold their own asserts)."""

from __future__ import annotations

import pathlib
import re
import sys
import types

import pytest

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
#: add_an_agent_type.md runs its economies op by op, as a reader would (40 s): the slow tier.
PAGES = ("add_a_component.md", pytest.param("add_an_agent_type.md", marks=pytest.mark.slow))


def _blocks(page: pathlib.Path) -> list:
    return re.findall(r"^```python\n(.*?)^```", page.read_text(), re.M | re.S)


@pytest.mark.parametrize("page", PAGES)
def test_worked_page_runs(page):
    blocks = _blocks(DOCS / page)
    assert len(blocks) >= 3, f"{page}: expected its code blocks"
    module = types.ModuleType(f"docs_{page.replace('.', '_')}")  # dataclasses look their module up
    sys.modules[module.__name__] = module
    try:
        for i, block in enumerate(blocks):
            try:
                exec(compile(block, f"{page} block {i + 1}", "exec"), module.__dict__)
            except Exception as e:  # name the block that failed
                raise AssertionError(f"{page}, code block {i + 1} failed: {type(e).__name__}: {e}") from e
    finally:
        del sys.modules[module.__name__]
