"""README.md's code blocks run as written, each alone, as a reader copies one.

- every ```python block names only what it imports or defines itself (a
  static check of the whole README, fast: it catches a block that leans on
  an earlier one's ``import jaxecon``);
- every ```python block runs in a fresh namespace of its own; the agent-group
  block is fast, the others compile an economy for half a minute and more
  on 2 CPU cores (the quick start runs op by op; the env line builds the
  canonical economy's fronts; the Foundation block compiles the shim): the
  slow tier;
- every ```bash block's ``jaxecon`` commands parse with the command line's
  own parser (installing and the test suite are left to CI, which runs
  those lines as ``.ci/run``).
"""

from __future__ import annotations

import builtins
import pathlib
import re
import shlex
import symtable
import sys
import types

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def _blocks(lang: str) -> list:
    return re.findall(rf"^```{lang}\n(.*?)^```", README.read_text(), re.M | re.S)


def _unbound_names(code: str, name: str) -> set:
    """Names a block reads that it neither imports nor assigns (nor Python's builtins)."""
    top = symtable.symtable(code, name, "exec")
    bound = {s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()}
    missing, tables = set(), [top]
    while tables:
        table = tables.pop()
        tables.extend(table.get_children())
        for s in table.get_symbols():
            at_top = table is top and s.is_referenced()
            if (at_top or s.is_global()) and s.get_name() not in bound and not hasattr(builtins, s.get_name()):
                missing.add(s.get_name())
    return missing


def test_readme_has_its_blocks():
    assert len(_blocks("python")) == len(PYTHON_BLOCKS) and len(_blocks("bash")) == 2


def test_every_python_block_names_only_what_it_imports_or_defines():
    for i, code in enumerate(_blocks("python")):
        assert not _unbound_names(code, f"block {i + 1}"), (
            f"README's python block {i + 1} uses {sorted(_unbound_names(code, str(i)))} without importing "
            f"or defining them:\n{code}")


#: The python blocks in order: (what it shows, slow or not).
PYTHON_BLOCKS = (
    ("quick start", True),
    ("agent groups", False),
    ("the env line for other people's JAX RL code", True),
    ("Foundation's object API", True),
)


@pytest.mark.parametrize("index", [
    pytest.param(i, id=what.replace(" ", "_").replace("'", ""), marks=[pytest.mark.slow] if slow else [])
    for i, (what, slow) in enumerate(PYTHON_BLOCKS)
])
def test_python_block_runs_alone(index):
    code = _blocks("python")[index]
    module = types.ModuleType(f"readme_block_{index + 1}")  # a fresh namespace, as a new script's
    sys.modules[module.__name__] = module
    try:
        exec(compile(code, f"README.md python block {index + 1}", "exec"), module.__dict__)
    except Exception as e:  # name the block that failed
        raise AssertionError(f"README's python block {index + 1} ({PYTHON_BLOCKS[index][0]}) failed: "
                             f"{type(e).__name__}: {e}") from e
    finally:
        del sys.modules[module.__name__]


def test_bash_blocks_jaxecon_commands_parse():
    from jaxecon.cli import build_parser

    commands = [part.strip() for block in _blocks("bash") for line in block.splitlines()
                for part in line.split("&&") if part.strip().startswith("jaxecon ")]
    assert commands == ["jaxecon run"]
    for command in commands:
        build_parser().parse_args(shlex.split(command)[1:])
