"""A synthetic case in Python: the dataclasses of docs/case-format.md §2 (format version 1)
and its constants. Decoding is walkfuzz.targets.minivm.case.decode, encoding
walkfuzz.targets.minivm.case.encode."""

from __future__ import annotations

from dataclasses import dataclass, field

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.expected import Expected
from walkfuzz.targets.minivm.case.queue_program import QueueOp
from walkfuzz.targets.minivm.case.stack_runs import StackRun

MAGIC = b"WFCS"
VERSION = 1
HEADER_SIZE = 8
SECTION_HEADER_SIZE = 8
SECTION_OPTIONAL = 1
TRUTH_FRAME_SIZE = 36
MAX_CODE_PATCHES = 1024
CODE_FILL = 0xCC  # every code heap byte no CODE_BYTES patch covers (int3)




# ---- the case ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ClassDef:
    modifiers: int
    name: bytes
    generic_name: bytes


@dataclass(frozen=True)
class MethodDef:
    class_index: int
    modifiers: int
    code_size: int  # valid bci: 0 .. code_size-1
    name: bytes
    signature: bytes
    generic_signature: bytes


@dataclass(frozen=True)
class Scope:
    method_index: int
    bci: int


@dataclass(frozen=True)
class PcDesc:
    pc_begin: int  # offsets from the blob's start
    pc_end: int
    scopes: tuple[Scope, ...]  # innermost first


@dataclass(frozen=True)
class Blob:
    kind: int  # vm.BlobKind
    comp_level: int
    start: int  # offset in the code heap
    size: int
    frame_size: int
    frame_complete: int
    method_index: int  # vm.NO_METHOD when none
    descs: tuple[PcDesc, ...] = ()

    @property
    def address(self) -> int:
        return vm.CODE_HEAP + self.start

    @property
    def end(self) -> int:
        return vm.CODE_HEAP + self.start + self.size


@dataclass(frozen=True)
class Thread:
    state: int  # vm.ThreadState
    flags: int  # vm.ThreadFlag bits
    anchor_sp: int
    anchor_fp: int
    anchor_pc: int


@dataclass(frozen=True)
class Context:
    pc: int
    sp: int
    fp: int


@dataclass(frozen=True)
class Walk:
    options: int
    entry: int  # vm.WalkEntry


@dataclass(frozen=True)
class Frame:
    """One ASGST_Frame as a walker reports it; method is a handle (0 = NULL)."""

    type: int
    comp_level: int
    bci: int
    method: int
    pc: int
    sp: int
    fp: int


@dataclass(frozen=True)
class Truth:
    """The walk the generator laid out (TRUTH section)."""

    run_result: int
    end_code: int
    frames: tuple[Frame, ...]


@dataclass(frozen=True)
class CodePatch:
    """Code heap bytes [CODE_HEAP + offset, + len(data)) other than the 0xCC fill."""

    offset: int
    data: bytes


@dataclass(frozen=True)
class Case:
    classes: tuple[ClassDef, ...]
    methods: tuple[MethodDef, ...]
    blobs: tuple[Blob, ...]
    thread: Thread
    stack: bytes
    context: Context
    walk: Walk
    truth: Truth | None = field(default=None)
    queue: tuple[QueueOp, ...] | None = field(default=None)
    code: tuple[CodePatch, ...] = field(default=())
    expected: Expected | None = field(default=None)
    # the repeat the stack image was encoded with (STACK with RUNS), if any: how the encoder
    # writes it again, not part of what the case is
    stack_run: StackRun | None = field(default=None, compare=False)

    def code_byte(self, address: int) -> int:
        """The byte of the code heap at `address` (§3): a patch's, else the fill."""
        for patch in self.code:
            offset = address - vm.CODE_HEAP - patch.offset
            if 0 <= offset < len(patch.data):
                return patch.data[offset]
        return CODE_FILL

    @property
    def stack_hi(self) -> int:
        return vm.STACK_TOP

    @property
    def stack_lo(self) -> int:
        return vm.STACK_TOP - len(self.stack)
