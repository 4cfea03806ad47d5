"""The native target: real unwinders (libunwind, LLVM's libunwind, libgcc, libdw, a frame-pointer
walk; walkfuzz.targets.native.unwinders) on real native stacks — perturbed contexts of generated
call chains (`fuzz`), signal sampling of a generated workload against a shadow stack (`stress`),
stack snapshots walked in remote-memory mode (`snapshot`), and every unwinder on the same inputs
(`differential`). Its Target protocol parts (walkfuzz.targets.protocol): `fuzz`, `stress`,
`replay`, `finding`, `inputs`. The native side is one extension per unwinder
(native/agents/native).
"""

TARGET = "native"
# `--target libunwind`: the native target walked by libunwind, by its first name. Findings of
# libunwind's walks stored before all five unwinders were one target name it as their target:
# they still read and replay.
ALIAS = "libunwind"
