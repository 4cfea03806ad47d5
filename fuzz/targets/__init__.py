"""walkfuzz.targets.table: see CONTRIBUTING.md, Layout."""
