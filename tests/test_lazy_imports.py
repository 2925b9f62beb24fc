"""``import jaxecon`` and ``jaxecon --help`` load no JAX; the lazy names still work.

Each check runs in a fresh interpreter (``sys.modules`` of this one already
holds JAX).
"""

import subprocess
import sys

import pytest

HEAVY = ("jax", "jaxlib", "flax", "optax", "numpy")


def _python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _help_loads(argv: list) -> list:
    code = (
        "import runpy, sys\n"
        f"sys.argv = {['jaxecon', *argv]!r}\n"
        "try:\n"
        "    runpy.run_module('jaxecon.cli', run_name='__main__')\n"
        "except SystemExit as exc:\n"
        "    assert exc.code == 0, exc.code\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r}))\n"
    )
    return _python(code).strip().splitlines()[-1]


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], ["bench", "--help"], ["train", "--help"],
                                  ["evaluate", "--help"], ["reproduce", "--help"]])
def test_help_imports_no_jax(argv):
    assert _help_loads(argv) == "[]"


def test_import_jaxecon_imports_no_jax():
    assert _python("import sys, jaxecon; print('jax' in sys.modules)").strip() == "False"


def test_lazy_names_resolve():
    code = (
        "import jaxecon.foundation, jaxecon\n"  # the submodule jaxecon.factory must not hide make
        "assert callable(jaxecon.make) and callable(jaxecon.make_from_config)\n"
        "from jaxecon import EnvParams, EnvState, validate_params, agents, endogenous, landmarks, resources\n"
        "assert jaxecon.component_registry.has('Build')\n"
        "assert jaxecon.scenario_registry.has('layout_from_file/simple_wood_and_stone')\n"
        "assert jaxecon.components.Build.name == 'Build'\n"
        "import jaxecon.wrappers\n"
        "print(sorted(jaxecon.__all__) == jaxecon.__all__, jaxecon.__version__)\n"
    )
    assert _python(code).split()[0] == "True"
    with pytest.raises(AttributeError, match="no attribute 'nonesuch'"):
        import jaxecon

        jaxecon.nonesuch


def test_registry_read_registers_the_builtins():
    """A registry read fills it, whatever was imported first (here only the registry module)."""
    code = (
        "from jaxecon.core.registry import component_registry, resource_registry, scenario_registry\n"
        "print(component_registry.has('Gather'), 'Wood' in resource_registry,\n"
        "      'CovidAndEconomySimulation' in scenario_registry.entries)\n"
    )
    assert _python(code).split() == ["True", "True", "True"]


def test_the_core_registry_loads_no_jax_and_gets_its_wiring_from_above():
    """``jaxecon.core.registry`` imports nothing above the core; ``import jaxecon``
    (run before it) installs the built-in loader and checks of ``jaxecon.registries``."""
    code = (
        "import sys\n"
        "import jaxecon.core.registry as r\n"
        "w = sys.modules['jaxecon.registries']\n"
        "print('jax' in sys.modules, r._builtin_loader is w.load_builtins,\n"
        "      r.component_registry.checks == [w.check_component],\n"
        "      r.scenario_registry.checks == [w.check_scenario], r.agent_registry.checks == [])\n"
    )
    assert _python(code).split() == ["False", "True", "True", "True", "True"]


def test_a_check_added_to_a_registry_runs_after_its_validate_once():
    from jaxecon.core.registry import Registry

    calls = []

    def check(cls):
        calls.append(("check", cls.name))
        if cls.name == "Bad":
            raise TypeError("Bad lacks it")

    registry = Registry("thing", validate=lambda cls: calls.append(("validate", cls.name)))
    registry.add_check(check)
    registry.add_check(check)
    registry.add(type("A", (), {"name": "Good"}))
    assert calls == [("validate", "Good"), ("check", "Good")]
    with pytest.raises(TypeError, match="Bad lacks it"):
        registry.add(type("B", (), {"name": "Bad"}))
    assert registry.entries == ["Good"]
