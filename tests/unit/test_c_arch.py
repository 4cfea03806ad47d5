"""Hand-written machine code stays in native/include/arch/: one instruction behind a named
inline function of wf_arch.h, a whole stub a header there that its one file includes; no other
C file under native/ writes inline assembly."""

from __future__ import annotations

import re

from walkfuzz.core.paths import ROOT

NATIVE = ROOT / "native"
ARCH = NATIVE / "include" / "arch"
ASSEMBLY = re.compile(r"\b(__asm__|asm)\s*(volatile\s*)?\(")


def test_no_inline_assembly_outside_the_arch_folder() -> None:
    sources = [p for p in NATIVE.rglob("*.[ch]") if ARCH not in p.parents]
    assert len(sources) > 100
    written = [str(p.relative_to(ROOT)) for p in sources if ASSEMBLY.search(p.read_text())]
    assert written == []


def test_the_arch_folder_holds_the_assembly() -> None:
    assert any(ASSEMBLY.search(p.read_text()) for p in ARCH.rglob("*.h"))
