"""Shim: cffi_modules needs setup(); everything else lives in pyproject.toml.

The package list is computed here because the import name (walkfuzz) differs from the
directory (fuzz/), which pyproject's static `packages` cannot discover. The core is built before
its testing extension, which fuzz/core/_build.py's build_ext links against it.
"""

import importlib.util
from pathlib import Path

from setuptools import find_packages, setup

BUILD_MODULE = Path(__file__).parent / "fuzz" / "core" / "_build.py"
_spec = importlib.util.spec_from_file_location("walkfuzz_build", BUILD_MODULE)
assert _spec is not None and _spec.loader is not None
_build = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_build)

setup(
    packages=["walkfuzz", *(f"walkfuzz.{p}" for p in find_packages("fuzz"))],
    cffi_modules=["fuzz/core/_build.py:ffibuilder", "fuzz/core/_build.py:testing_ffibuilder"],
    cmdclass={"build_ext": _build.build_ext_class()},
)
