"""walkfuzz.targets.minivm.case: see CONTRIBUTING.md, Layout."""
