"""Remote-memory mode of the native unwinders: a captured stack (registers, stack bytes, module
map) walked through accessors over it (native/agents/snapshot/wf_snapshot.h)."""
