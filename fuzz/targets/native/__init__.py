"""The libunwind target: fuzz (perturbed contexts over generated call chains) and stress
(signal sampling of generated workloads against a shadow stack) of Debian's libunwind.

Entry points: `run_libunwind_fuzz` (walkfuzz.targets.native.fuzz) and `run_libunwind_stress`
(walkfuzz.targets.native.stress). The native side is walkfuzz._unwind (native/agents/native).
"""
