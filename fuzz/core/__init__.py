"""walkfuzz.core: see CONTRIBUTING.md, Layout."""
