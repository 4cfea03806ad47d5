"""walkfuzz.targets.minivm: see CONTRIBUTING.md, Layout."""
