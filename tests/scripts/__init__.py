"""Tests of the tools in ``scripts/`` that are not part of the package, each loaded from its file
by :func:`script` (the scripts are run as ``python scripts/NAME.py``, not imported from the package)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def script(name: str) -> ModuleType:
    """The module of ``scripts/NAME.py``, loaded once (as ``scripts_NAME`` in ``sys.modules``, so
    that its pydantic models resolve their annotations)."""
    key = f"scripts_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, SCRIPTS / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[key]
            raise
    return sys.modules[key]
