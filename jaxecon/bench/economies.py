"""The benchmark's economies: the named economies of ``jaxecon.configs.ECONOMIES``.

``--economies`` takes any of their names; without it ``jaxecon bench``
measures ``DEFAULT_ECONOMIES``, those the table marks ``bench_default``
(``default``, ``gtb100``, ``covid19``).
"""

from __future__ import annotations

from jaxecon.configs import ECONOMIES

__all__ = ["DEFAULT_ECONOMIES", "ECONOMIES", "economy_makers"]

#: Economies measured when ``--economies`` is not given.
DEFAULT_ECONOMIES = tuple(name for name, economy in ECONOMIES.items() if economy.bench_default)


def economy_makers() -> dict:
    """``{name: () -> env config dict}`` for every economy of ``ECONOMIES``, in its order."""
    return {name: economy.make for name, economy in ECONOMIES.items()}
