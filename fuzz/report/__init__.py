"""walkfuzz.report.document: see CONTRIBUTING.md, Layout."""
