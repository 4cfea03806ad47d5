"""The simulated VM's fixed facts, in Python: address space, handles, kinds and API codes.

Written from docs/case-format.md §1-§4 (normative), not from the C headers, so that the Python
decoder (walkfuzz.targets.minivm.case.format) and walker spec (walkfuzz.targets.minivm.spec) stay an
independent implementation. """

from __future__ import annotations

from enum import IntEnum, IntFlag

# ---- address space (docs §1) -----------------------------------------------------------------
ROOT = 0x3E0000000000
CLASSES = 0x3E0000010000
METHODS = 0x3E0000020000
CODE_HEAP = 0x3E0001000000
CODE_HEAP_SIZE = 0x100000
NATIVE_TEXT = 0x3E0002000000
NATIVE_TEXT_SIZE = 0x100000
STACK_TOP = 0x3E0003100000
BYTECODE = 0x3E0004000000
BYTECODE_STRIDE = 0x10000
CLASS_STRIDE = 64
METHOD_STRIDE = 64
WORD = 8

# ---- format limits (docs §2) -----------------------------------------------------------------
MAX_CLASSES = 256
MAX_METHODS = 1024
MAX_BLOBS = 1024
MAX_PCDESCS = 8192
MAX_SCOPES = 8
MAX_NAME = 1024
STRING_POOL = 0x100000  # total string bytes, one NUL each
MAX_STACK = 0x100000
MAX_TRUTH = 65536
MIN_FRAME_SIZE = 16
MAX_FRAME_SIZE = 16384
NO_METHOD = 0xFFFFFFFF

# ---- the walk (docs §4) ----------------------------------------------------------------------
MAX_DEPTH = 8192  # WF_WALK_MAX_DEPTH: physical frames decoded per walk


def method_handle(index: int) -> int:
    """ASGST_Method of method `index`."""
    return METHODS + METHOD_STRIDE * index


def class_handle(index: int) -> int:
    """ASGST_Class of class `index`."""
    return CLASSES + CLASS_STRIDE * index


def bytecode_base(index: int) -> int:
    """Address of bci 0 of method `index` (a bcp is base + bci)."""
    return BYTECODE + BYTECODE_STRIDE * index


def method_index_of(handle: int, method_count: int) -> int | None:
    """The index behind a method handle, or None if it is no valid handle."""
    offset = handle - METHODS
    if offset < 0 or offset % METHOD_STRIDE != 0 or offset // METHOD_STRIDE >= method_count:
        return None
    return offset // METHOD_STRIDE


class BlobKind(IntEnum):
    INTERPRETER = 1
    COMPILED = 2
    NATIVE_WRAPPER = 3
    STUB = 4
    ENTRY = 5


class FrameKind(IntEnum):
    """Kind of a physical frame: its pc's blob kind, or C for native text (docs §3)."""

    INTERPRETED = 1
    COMPILED = 2
    NATIVE = 3
    STUB = 4
    ENTRY = 5
    C = 6


FRAME_KIND_OF_BLOB = {
    BlobKind.INTERPRETER: FrameKind.INTERPRETED,
    BlobKind.COMPILED: FrameKind.COMPILED,
    BlobKind.NATIVE_WRAPPER: FrameKind.NATIVE,
    BlobKind.STUB: FrameKind.STUB,
    BlobKind.ENTRY: FrameKind.ENTRY,
}
FIXED_FRAME_BLOBS = frozenset({BlobKind.COMPILED, BlobKind.NATIVE_WRAPPER, BlobKind.STUB})
METHOD_BLOBS = frozenset({BlobKind.COMPILED, BlobKind.NATIVE_WRAPPER})


class ThreadState(IntEnum):
    NOT_JAVA = 0
    NEW = 1
    IN_JAVA = 2
    IN_VM = 3
    IN_NATIVE = 4
    BLOCKED = 5
    IN_TRANSITION = 6
    EXITING = 7


class ThreadFlag(IntFlag):
    SUSPENDED = 1
    CURRENT = 2


class WalkEntry(IntEnum):
    UCONTEXT = 0  # ASGST_RunWithIterator(ucontext from CONTEXT)
    FROM_FRAME = 1  # ASGST_RunWithIteratorFromFrame(sp, fp, pc of CONTEXT)
    NULL_CONTEXT = 2  # ASGST_RunWithIterator(NULL)


class Option(IntFlag):
    INCLUDE_NON_JAVA_FRAMES = 1
    WALK_SAME_THREAD = 2


class FrameType(IntEnum):
    JAVA = 1
    JAVA_INLINED = 2
    JAVA_NATIVE = 3
    NON_JAVA = 4


class TraceKind(IntEnum):
    JAVA = 1
    CPP = 2


class WalkCode(IntEnum):
    """What Run* and NextFrame return besides 1 (a frame) and the trace kinds."""

    NO_FRAME = 0
    NO_THREAD = -1
    THREAD_EXIT = -2
    UNSAFE_STATE = -3
    NO_TOP_JAVA_FRAME = -4
    BAD_PC = -17
    BAD_SP = -18
    BAD_FP = -19
    BAD_METHOD = -20
    BAD_BCP = -21
    DEPTH_LIMIT = -22
    BAD_ARGUMENT = -23


def code_name(code: int) -> str:
    """A readable name of a Run*/NextFrame result: 'frame', 'java-trace', 'BAD_PC', ..."""
    if code == 1:
        return "frame"  # also JAVA_TRACE for Run*; callers that know say which
    try:
        return WalkCode(code).name
    except ValueError:
        return f"undocumented({code})"
