"""Small cases by hand: a fixed code heap with one blob of each kind, and a stack image written
word by word. For tests and for writing a reproducer of a walker bug in a few lines:

    b = CaseBuilder(stack_words=8)
    fp = b.c_frame(fp=b.hi - 16, ret=0, caller_fp=0)      # a C frame, the outermost
    case = b.case(context=(PC_C, b.hi - 32, fp))          # (pc, sp, fp)

Addresses are absolute (docs/case-format.md §1); `hi` is the stack top.
"""

from __future__ import annotations

from walkfuzz.targets.minivm import vm_model as vm
from walkfuzz.targets.minivm.case.format import (
    Blob,
    Case,
    ClassDef,
    Context,
    MethodDef,
    PcDesc,
    Scope,
    Thread,
    Truth,
    Walk,
)
from walkfuzz.targets.minivm.vm_model import BlobKind, ThreadFlag, ThreadState

METHODS = (
    MethodDef(0, 0x1, 100, b"outer", b"()V", b""),
    MethodDef(0, 0x1, 50, b"middle", b"(I)V", b""),
    MethodDef(1, 0x101, 10, b"inner", b"()I", b""),
)
CLASSES = (ClassDef(0x1, b"pkg/A", b""), ClassDef(0x11, b"pkg/B", b"Lpkg/B<TT;>;"))

COMPILED_FRAME = 32
NATIVE_FRAME = 32
STUB_FRAME = 16
BLOBS = (
    Blob(BlobKind.INTERPRETER, 0, 0x000, 0x100, 0, 0, vm.NO_METHOD),
    Blob(BlobKind.COMPILED, 4, 0x100, 0x100, COMPILED_FRAME, 0x10, 0,
         (PcDesc(0x20, 0x40, (Scope(2, 3), Scope(1, 7), Scope(0, 9))),)),
    Blob(BlobKind.NATIVE_WRAPPER, 0, 0x200, 0x100, NATIVE_FRAME, 0x10, 1),
    Blob(BlobKind.STUB, 0, 0x300, 0x100, STUB_FRAME, 0x8, vm.NO_METHOD),
    Blob(BlobKind.ENTRY, 0, 0x400, 0x100, 0, 0, vm.NO_METHOD),
)
PC_INTERPRETED = vm.CODE_HEAP + 0x010
PC_COMPILED = vm.CODE_HEAP + 0x180  # in no descriptor: bci -1
PC_COMPILED_INLINED = vm.CODE_HEAP + 0x130  # in the descriptor: three scopes
PC_COMPILED_PROLOGUE = vm.CODE_HEAP + 0x104  # before frame_complete
PC_NATIVE = vm.CODE_HEAP + 0x280
PC_STUB = vm.CODE_HEAP + 0x380
PC_ENTRY = vm.CODE_HEAP + 0x480
PC_C = vm.NATIVE_TEXT + 0x100
PC_NO_BLOB = vm.CODE_HEAP + 0x800  # code heap, no blob there
PC_NOT_CODE = 0x1234


class CaseBuilder:
    """A stack image of `stack_words` words at the top of the stack region, all zero."""

    def __init__(self, stack_words: int = 64) -> None:
        self.hi = vm.STACK_TOP
        self.lo = vm.STACK_TOP - 8 * stack_words
        self.stack = bytearray(8 * stack_words)

    def put(self, addr: int, value: int) -> None:
        """[addr] = value (addr an aligned word of the stack image)."""
        if addr % 8 or not self.lo <= addr < self.hi:
            raise ValueError(f"{addr:#x} is no aligned word of [{self.lo:#x}, {self.hi:#x})")
        self.stack[addr - self.lo:addr - self.lo + 8] = (value % 2**64).to_bytes(8, "little")

    # fp-chained frames: [fp] = caller's fp, [fp+8] = return address
    def fp_frame(self, fp: int, ret: int, caller_fp: int) -> int:
        self.put(fp, caller_fp)
        self.put(fp + 8, ret)
        return fp

    def c_frame(self, fp: int, ret: int, caller_fp: int) -> int:
        return self.fp_frame(fp, ret, caller_fp)

    def interpreted_frame(self, fp: int, ret: int, caller_fp: int, method: int, bci: int) -> int:
        self.put(fp - 8, vm.method_handle(method))
        self.put(fp - 16, vm.bytecode_base(method) + bci)
        return self.fp_frame(fp, ret, caller_fp)

    def entry_frame(self, fp: int, ret: int, caller_fp: int, anchor: tuple[int, int, int]) -> int:
        """anchor = (sp, fp, pc) of the older Java segment; sp 0: none."""
        self.put(fp - 8, anchor[0])
        self.put(fp - 16, anchor[1])
        self.put(fp - 24, anchor[2])
        return self.fp_frame(fp, ret, caller_fp)

    def fixed_frame(self, sp: int, size: int, ret: int, caller_fp: int) -> int:
        """A compiled / native wrapper / stub frame of `size` bytes at sp."""
        self.put(sp + size - 8, ret)
        self.put(sp + size - 16, caller_fp)
        return sp

    def case(self, context: tuple[int, int, int], state: int = ThreadState.IN_JAVA,
             flags: int = ThreadFlag.SUSPENDED, anchor: tuple[int, int, int] = (0, 0, 0),
             options: int = 0, entry: int = vm.WalkEntry.UCONTEXT,
             truth: Truth | None = None) -> Case:
        """The case; context = (pc, sp, fp)."""
        pc, sp, fp = context
        return Case(CLASSES, METHODS, BLOBS, Thread(int(state), int(flags), *anchor),
                    bytes(self.stack), Context(pc, sp, fp), Walk(int(options), int(entry)), truth)
