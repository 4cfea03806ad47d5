"""walkfuzz.triage.driver: see CONTRIBUTING.md, Layout."""
