"""``_cub.nvvm.declare_exact_block``: a kernel's NVVM IR (LLVM 7 text) annotated with the block shape it was built
for (``reqntid``), any maximum (``maxntid``) dropped from the annotation list, since ptxas refuses both."""
from __future__ import annotations

import re

from cuda.coop._cub.nvvm import declare_exact_block

KERNEL = b"void (i8*, i64)* @kernel_a"
IR = b"""; ModuleID = 'k'
define void @kernel_a(i8* %p, i64 %n) {
  ret void
}

!nvvm.annotations = !{!0, !1, !2, !3}
!nvvmir.version = !{!4}

!0 = !{void (i8*, i64)* @kernel_a, !"kernel", i32 1}
!1 = !{void (i8*, i64)* @kernel_a, !"maxntidx", i32 256}
!2 = !{void (i8*, i64)* @kernel_a, !"maxntidy", i32 1}
!3 = !{void (i8*, i64)* @kernel_a, !"maxntidz", i32 1}
!4 = !{i32 2, i32 0, i32 3, i32 2}
\x00"""


def _listed(ir: bytes) -> list[bytes]:
    """The annotation nodes the module lists, by their text."""
    listing = re.search(rb"^!nvvm\.annotations = !\{(.*)\}$", ir, re.MULTILINE)
    assert listing is not None
    nodes = dict(re.findall(rb"^!(\d+) = !\{(.*)\}$", ir, re.MULTILINE))
    return [nodes[token.strip().lstrip(b"!")] for token in listing.group(1).split(b",")]


def test_the_maximum_becomes_the_exact_block():
    ir = declare_exact_block(IR, (128, 2, 1))
    assert ir is not None
    listed = _listed(ir)
    assert KERNEL + b', !"kernel", i32 1' in listed
    assert [node for node in listed if b"maxntid" in node] == []
    assert [node for node in listed if b"reqntid" in node] == [
        KERNEL + b', !"reqntidx", i32 128', KERNEL + b', !"reqntidy", i32 2', KERNEL + b', !"reqntidz", i32 1']
    assert b"\x00" not in ir and ir.startswith(b"; ModuleID")
    assert b'!4 = !{i32 2, i32 0, i32 3, i32 2}' in ir  # the rest of the module untouched


def test_a_kernel_without_a_maximum_gets_the_exact_block():
    plain = IR.replace(b"!{!0, !1, !2, !3}", b"!{!0}")
    listed = _listed(declare_exact_block(plain, (64,)) or b"")
    assert listed == [KERNEL + b', !"kernel", i32 1', KERNEL + b', !"reqntidx", i32 64',
                      KERNEL + b', !"reqntidy", i32 1', KERNEL + b', !"reqntidz", i32 1']


def test_a_second_declaration_replaces_the_first():
    once = declare_exact_block(IR, (256, 1, 1))
    twice = declare_exact_block(once or b"", (32, 4, 1))
    assert [node for node in _listed(twice or b"") if b"ntid" in node] == [
        KERNEL + b', !"reqntidx", i32 32', KERNEL + b', !"reqntidy", i32 4', KERNEL + b', !"reqntidz", i32 1']


def test_ir_without_an_annotated_kernel_is_left_to_the_caller():
    assert declare_exact_block(IR.replace(b'!"kernel"', b'!"other"'), (256, 1, 1)) is None
    assert declare_exact_block(IR.split(b"!nvvm.annotations")[0], (256, 1, 1)) is None
