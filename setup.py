"""Shim: cffi_modules needs setup(); everything else lives in pyproject.toml.

The package list is computed here because the import name (walkfuzz) differs from the
directory (fuzz/), which pyproject's static `packages` cannot discover.
"""

from setuptools import find_packages, setup

setup(
    packages=["walkfuzz", *(f"walkfuzz.{p}" for p in find_packages("fuzz"))],
    cffi_modules=["fuzz/core/_build.py:ffibuilder"],
)
