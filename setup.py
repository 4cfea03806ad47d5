"""Shim: cffi_modules needs setup(); everything else lives in pyproject.toml."""

from setuptools import setup

setup(cffi_modules=["fuzz/_build.py:ffibuilder"])
