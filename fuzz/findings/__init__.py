"""walkfuzz.findings: see CONTRIBUTING.md, Layout."""
