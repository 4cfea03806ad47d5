"""walkfuzz: fuzzing and stress-testing for stack walkers."""

__version__ = "0.1.0"
