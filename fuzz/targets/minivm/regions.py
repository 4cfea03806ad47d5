"""The simulated VM's readable memory, as regions a fault address is classified against
(walkfuzz.findings.classify.fault_class)."""

from __future__ import annotations

from walkfuzz.findings.classify import Region, region
from walkfuzz.targets.minivm import vm_model as vm

# docs/case-format.md §1: what a case maps readable (everything else in the span faults).
MINIVM_REGIONS: tuple[Region, ...] = (
    region("root", vm.ROOT, 0x1000),
    region("classes", vm.CLASSES, 256 * 64),
    region("methods", vm.METHODS, 1024 * 64),
    region("blobs", 0x3E0000040000, 1024 * 64),
    region("pcdescs", 0x3E0000060000, 8192 * 144),
    region("segmap", 0x3E0000180000, 2 * (vm.CODE_HEAP_SIZE // 64)),  # wf_vm.h WF_VM_SEGMAP
    region("strings", 0x3E0000200000, 0x100000),
    region("code-heap", vm.CODE_HEAP, vm.CODE_HEAP_SIZE),
    region("native-text", vm.NATIVE_TEXT, vm.NATIVE_TEXT_SIZE),
    region("stack", vm.STACK_TOP - 0x100000, 0x100000),
)
