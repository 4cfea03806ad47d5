"""One module per CLI command. Each defines `register(subparsers)`; cli.py discovers them.

`register` adds one sub-parser and sets `func=run` on it, where `run(args) -> int` returns the
exit status. Commands raise `walkfuzz.core.errors.UserError` for bad input.
"""
