"""walkfuzz.targets.minivm.queue: see CONTRIBUTING.md, Layout."""
