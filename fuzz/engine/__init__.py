"""walkfuzz.engine: see CONTRIBUTING.md, Layout."""
