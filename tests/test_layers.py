"""docs/architecture.md's picture of the layers is what the package's imports do.

The test reads the picture (the fenced block under "## Layers") as the layer
table and parses every module of ``jaxecon/`` with ``ast``; each import must
name a module in its own layer or below. Counted as imports: ``import`` and
``from ... import`` anywhere in a file (function-local and ``TYPE_CHECKING``
ones too, relative ones resolved), a string constant that is exactly a
jaxecon submodule's dotted name (the lazy tables fed to ``importlib``), and
``jaxecon.<name>`` read off the package (``import jaxecon; jaxecon.make``),
resolved through the package's lazy table to the module that defines it.

Pure parsing: imports no JAX and runs in well under a second.
"""

from __future__ import annotations

import ast
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "jaxecon"
DOC = ROOT / "docs" / "architecture.md"


def module_name(path: pathlib.Path) -> str:
    """``jaxecon/core/registry.py`` -> ``jaxecon.core.registry``; a package's ``__init__.py`` -> the package."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def parse_picture(text: str) -> list[list[str]]:
    """The layers of the picture, bottom first, each the module prefixes it names.

    The picture is the first fenced block after "## Layers". Lines joined by a
    ``|`` line are different layers (the upper line is the higher layer);
    consecutive text lines are one layer. A name is a token ending in ``/``
    (a package) or ``.py`` (a module), outside parentheses; ``__init__.py`` is
    the package ``jaxecon`` itself.
    """
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    layers: list[list[str]] = []
    current: list[str] | None = None
    for line in block.splitlines()[1:]:  # [0] is the fence's info string
        stripped = line.strip()
        if not stripped:
            continue
        if stripped == "|":
            current = None
            continue
        if current is None:
            current = []
            layers.append(current)
        for token in re.sub(r"\([^)]*\)", " ", stripped).split():
            if token == "__init__.py":
                current.append("jaxecon")
            elif re.fullmatch(r"[a-z_][a-z0-9_/]*(\.py|/)", token):
                current.append("jaxecon." + token.removesuffix(".py").rstrip("/").replace("/", "."))
    return layers[::-1]


def layer_table(layers: list[list[str]]) -> dict[str, int]:
    return {prefix: level for level, names in enumerate(layers) for prefix in names}


def layer_of(module: str, table: dict[str, int]) -> int | None:
    """The layer of the longest prefix of ``module`` in ``table`` (the package
    itself only by exact name), None when the picture names none."""
    if module == "jaxecon":
        return table.get("jaxecon")
    parts = module.split(".")
    for n in range(len(parts), 1, -1):
        prefix = ".".join(parts[:n])
        if prefix in table:
            return table[prefix]
    return None


def package_lazy_names() -> dict[str, str]:
    """``jaxecon/__init__.py``'s ``_LAZY``: public name -> the module defining it (read by ast)."""
    tree = ast.parse(MODULES["jaxecon"].read_text())
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "_LAZY":
            table = ast.literal_eval(node.value)
            return {name: module for name, (module, _attr) in table.items()}
    raise AssertionError("jaxecon/__init__.py has no _LAZY table")


def _resolve(dotted: str, lazy: dict[str, str]) -> str | None:
    """The jaxecon module that ``dotted`` (``jaxecon.a.b.c``) names or reads
    from: its longest prefix that is a module, a public lazy name of the
    package resolved to its module; None for ``jaxecon`` alone."""
    parts = dotted.split(".")
    if len(parts) > 1 and parts[1] in lazy and "jaxecon." + parts[1] not in MODULES:
        return lazy[parts[1]]
    for n in range(len(parts), 1, -1):
        prefix = ".".join(parts[:n])
        if prefix in MODULES:
            return prefix
    return None


def imports_of(module: str, lazy: dict[str, str]) -> list[tuple[int, str]]:
    """``(line, imported jaxecon module)`` for every import the file makes (see the module docstring)."""
    path = MODULES[module]
    tree = ast.parse(path.read_text(), filename=str(path))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str | None]] = []
    binds_package = False
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] == "jaxecon":
                    if alias.asname is None:
                        binds_package = True  # `import jaxecon.x` binds `jaxecon`
                    found.append((node.lineno, _resolve(alias.name, lazy)))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            if source.split(".")[0] != "jaxecon":
                continue
            for alias in node.names:  # a submodule, a lazy name, or an attribute of `source`
                found.append((node.lineno, _resolve(f"{source}.{alias.name}", lazy)))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in MODULES
              and node.value != "jaxecon"):  # "jaxecon" alone is the program's name in strings
            found.append((node.lineno, node.value))
    if binds_package:
        for node in ast.walk(tree):
            chain = []
            while isinstance(node, ast.Attribute):
                chain.append(node.attr)
                node = node.value
            if chain and isinstance(node, ast.Name) and node.id == "jaxecon":
                found.append((getattr(node, "lineno", 0), _resolve(".".join(["jaxecon", *chain[::-1]]), lazy)))
    return [(line, target) for line, target in found if target is not None and target != module]


def _shown(path: pathlib.Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def upward_imports(layers: list[list[str]]) -> list[str]:
    """Every import of a module above the importer's layer, as readable lines."""
    table = layer_table(layers)
    lazy = package_lazy_names()
    bad = []
    for module, path in MODULES.items():
        own = layer_of(module, table)
        for line, target in imports_of(module, lazy):
            theirs = layer_of(target, table)
            if theirs is not None and own is not None and theirs > own:
                bad.append(f"{_shown(path)}:{line}: {module} (layer {own}) imports "
                           f"{target} (layer {theirs})")
    return sorted(set(bad))


@pytest.fixture(scope="module")
def layers():
    return parse_picture(DOC.read_text())


def test_picture_places_every_module(layers):
    table = layer_table(layers)
    assert len(table) == sum(len(names) for names in layers), "a name appears in two layers"
    missing = [m for m in MODULES if layer_of(m, table) is None]
    assert not missing, f"docs/architecture.md's picture places no layer for {missing}"
    unknown = [p for p in table if p not in MODULES]
    assert not unknown, f"the picture names modules that do not exist: {unknown}"


def test_no_module_imports_from_a_layer_above_its_own(layers):
    bad = upward_imports(layers)
    assert not bad, "imports from a layer above (docs/architecture.md, ## Layers):\n" + "\n".join(bad)


def test_core_imports_only_core_and_spaces():
    lazy = package_lazy_names()
    bad = [(m, line, t) for m in MODULES if m == "jaxecon.core" or m.startswith("jaxecon.core.")
           for line, t in imports_of(m, lazy)
           if not (t == "jaxecon.spaces" or t == "jaxecon.core" or t.startswith("jaxecon.core."))]
    assert not bad, bad


def test_nothing_imports_cli():
    lazy = package_lazy_names()
    bad = [(m, line, t) for m in MODULES if m != "jaxecon" and not m.startswith("jaxecon.cli")
           for line, t in imports_of(m, lazy) if t == "jaxecon.cli" or t.startswith("jaxecon.cli.")]
    assert not bad, bad


def test_the_check_catches_an_upward_import(layers, tmp_path, monkeypatch):
    """The checker itself: an upward import of each kind it reads is reported."""
    probe = PACKAGE / "core" / "registry.py"
    source = probe.read_text() + (
        "\n\ndef _probe():\n"
        "    from jaxecon.interop.foundation_hooks import check_declared\n"
        "    import jaxecon\n"
        "    return jaxecon.make, 'jaxecon.scenarios', check_declared\n"
    )
    copy = tmp_path / "registry.py"
    copy.write_text(source)
    monkeypatch.setitem(MODULES, "jaxecon.core.registry", copy)
    targets = {t for _line, t in imports_of("jaxecon.core.registry", package_lazy_names())}
    assert {"jaxecon.interop.foundation_hooks", "jaxecon.factory", "jaxecon.scenarios"} <= targets
    assert any("jaxecon.core.registry" in b and "jaxecon.factory" in b for b in upward_imports(layers))


def test_parse_picture_reads_layers_bottom_first():
    text = "## Layers\n\n```\n  b/   c.py (x/ y.py)\n  d.py\n   |\n  a.py   __init__.py\n```\n"
    assert parse_picture(text) == [["jaxecon.a", "jaxecon"], ["jaxecon.b", "jaxecon.c", "jaxecon.d"]]
