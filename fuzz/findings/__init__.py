"""walkfuzz.findings.finding: see CONTRIBUTING.md, Layout."""
