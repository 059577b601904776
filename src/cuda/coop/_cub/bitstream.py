"""The integer-array constants of an LLVM bitcode module, read without LLVM (docs: cutlass, "How it works").

The bitcode route reads each call's scratch size and alignment from the clang output it already has: the
translation unit defines them as ``extern "C"`` constant arrays (``<symbol>_scratch_size``, ``provider.py``), so
one clang compile gives the bitcode and the sizes, and no other compiler has to run.

Only what that needs is decoded, following LLVM's published description of the format ("LLVM Bitcode File
Format"): the bitstream container (abbreviations, the BLOCKINFO block, blobs), the module's global variable records
with their names in the string table, and the module-level constants that initialise them. Function bodies,
metadata and everything else are skipped by their block lengths. Anything unexpected is a ``ValueError``: the
caller then asks another source (NVRTC) for the sizes; a wrong answer is never made up.
"""
from __future__ import annotations

from dataclasses import dataclass, field

_MAGIC = b"BC\xc0\xde"
_WRAPPER_MAGIC = 0x0B17C0DE

# abbreviation ids every block has
_END_BLOCK, _ENTER_SUBBLOCK, _DEFINE_ABBREV, _UNABBREV_RECORD = 0, 1, 2, 3
# block ids
_BLOCKINFO, _MODULE, _CONSTANTS, _STRTAB = 0, 8, 11, 23
# record codes
_SETBID = 1  # BLOCKINFO
_VERSION, _GLOBALVAR, _FUNCTION, _ALIAS_OLD, _ALIAS, _IFUNC = 1, 7, 8, 9, 14, 15  # MODULE
_SETTYPE, _INTEGER, _AGGREGATE, _DATA = 1, 4, 7, 22  # CONSTANTS
_STRTAB_BLOB = 1
_CHAR6 = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._"


class _Bits:
    """A bit cursor over ``data``: fields are read least significant bit first."""

    def __init__(self, data: bytes, start: int, end: int) -> None:
        self.data, self.pos, self.end = data, start * 8, end * 8

    def read(self, width: int) -> int:
        if width == 0:
            return 0
        if self.pos + width > self.end:
            raise ValueError("the bitcode ends inside a field")
        first = self.pos >> 3
        chunk = int.from_bytes(self.data[first:(self.pos + width + 7) >> 3], "little")
        self.pos += width
        return (chunk >> ((self.pos - width) & 7)) & ((1 << width) - 1)

    def vbr(self, width: int) -> int:
        """A variable-width integer: ``width``-bit pieces whose top bit says that another piece follows."""
        more = 1 << (width - 1)
        value = shift = 0
        while True:
            piece = self.read(width)
            value |= (piece & (more - 1)) << shift
            if not piece & more:
                return value
            shift += width - 1
            if shift > 64:
                raise ValueError("a variable-width integer of the bitcode is too long")

    def align32(self) -> None:
        self.pos = (self.pos + 31) & ~31
        if self.pos > self.end:
            raise ValueError("the bitcode ends inside a block")


# An abbreviation operand: ("literal", value), ("fixed", width), ("vbr", width), ("array", 0), ("char6", 0) or
# ("blob", 0); an array's element encoding is the operand after it.
_Operand = tuple[str, int]
_ENCODINGS = {1: "fixed", 2: "vbr", 3: "array", 4: "char6", 5: "blob"}


def _define_abbrev(bits: _Bits) -> list[_Operand]:
    operands: list[_Operand] = []
    count = bits.vbr(5)
    while len(operands) < count:
        if bits.read(1):
            operands.append(("literal", bits.vbr(8)))
            continue
        encoding = _ENCODINGS.get(bits.read(3))
        if encoding is None:
            raise ValueError("the bitcode has an abbreviation of an unknown encoding")
        width = bits.vbr(5) if encoding in ("fixed", "vbr") else 0
        if encoding in ("fixed", "vbr") and width == 0:  # a field of no bits is the value 0
            operands.append(("literal", 0))
        else:
            operands.append((encoding, width))
    return operands


def _scalar(bits: _Bits, operand: _Operand) -> int:
    kind, value = operand
    if kind == "literal":
        return value
    if kind == "fixed":
        return bits.read(value)
    if kind == "vbr":
        return bits.vbr(value)
    if kind == "char6":
        return _CHAR6[bits.read(6)]
    raise ValueError("the bitcode has an array or blob inside an array")


def _abbreviated(bits: _Bits, operands: list[_Operand]) -> tuple[list[int], bytes | None]:
    fields: list[int] = []
    blob = None
    index = 0
    while index < len(operands):
        kind = operands[index][0]
        if kind == "array":
            if index + 2 != len(operands):
                raise ValueError("the bitcode has an array that is not its abbreviation's last operand")
            element = operands[index + 1]
            fields.extend(_scalar(bits, element) for _ in range(bits.vbr(6)))
            break
        if kind == "blob":
            size = bits.vbr(6)
            bits.align32()
            start = bits.pos >> 3
            if bits.pos + size * 8 > bits.end:
                raise ValueError("the bitcode ends inside a blob")
            blob = bits.data[start:start + size]
            bits.pos += size * 8
            bits.align32()
        else:
            fields.append(_scalar(bits, operands[index]))
        index += 1
    if not fields:
        raise ValueError("the bitcode has a record without a code")
    return fields, blob


@dataclass(frozen=True)
class _Aggregate:
    """A constant array or structure by the value ids of its members."""

    members: tuple[int, ...]


# A module value as far as it is decoded: an integer, an integer array, an aggregate, or None (anything else)
_Value = int | tuple[int, ...] | _Aggregate | None


@dataclass
class _Module:
    """What the walk collects: each global variable (name offset and size in the string table, initialiser value
    id + 1, 0 for none), the module's values in value-id order, and the string table."""

    version: int = 0
    globals: list[tuple[int, int, int]] = field(default_factory=list)
    values: list[_Value] = field(default_factory=list)
    strtab: bytes = b""


def _walk(bits: _Bits, block: int, width: int, blockinfo: dict[int, list[list[_Operand]]], module: _Module,
          depth: int) -> None:
    """Read one block's records (the cursor after its header) up to its end, entering the blocks ``module`` needs
    and skipping the others."""
    abbrevs = list(blockinfo.get(block, ()))
    described: int | None = None  # BLOCKINFO: the block its abbreviations are for
    while True:
        abbrev_id = bits.read(width)
        if abbrev_id == _END_BLOCK:
            bits.align32()
            return
        if abbrev_id == _ENTER_SUBBLOCK:
            inner, inner_width = bits.vbr(8), bits.vbr(4)
            bits.align32()
            words = bits.read(32)
            after = bits.pos + words * 32
            if after > bits.end:
                raise ValueError("the bitcode ends inside a block")
            wanted = inner == _BLOCKINFO or (block == _MODULE and inner == _CONSTANTS)
            if wanted and depth < 8:
                _walk(bits, inner, inner_width, blockinfo, module, depth + 1)
            bits.pos = after
            continue
        if abbrev_id == _DEFINE_ABBREV:
            abbrev = _define_abbrev(bits)
            if block == _BLOCKINFO:
                if described is None:
                    raise ValueError("the bitcode's BLOCKINFO defines an abbreviation before naming its block")
                blockinfo.setdefault(described, []).append(abbrev)
            else:
                abbrevs.append(abbrev)
            continue
        if abbrev_id == _UNABBREV_RECORD:
            code, count = bits.vbr(6), bits.vbr(6)
            fields, blob = [code, *(bits.vbr(6) for _ in range(count))], None
        else:
            if abbrev_id - 4 >= len(abbrevs):
                raise ValueError("the bitcode uses an undefined abbreviation")
            fields, blob = _abbreviated(bits, abbrevs[abbrev_id - 4])
        if block == _BLOCKINFO and fields[0] == _SETBID and len(fields) > 1:
            described = fields[1]
        elif block == _MODULE:
            _module_record(fields[0], fields[1:], module)
        elif block == _CONSTANTS:
            _constant_record(fields[0], fields[1:], module)
        elif block == _STRTAB and fields[0] == _STRTAB_BLOB and blob is not None:
            module.strtab = blob


def _module_record(code: int, ops: list[int], module: _Module) -> None:
    if code == _VERSION and ops:
        module.version = ops[0]
    elif code == _GLOBALVAR:
        if module.version < 2 or len(ops) < 5:  # names in the string table came with version 2
            raise ValueError("the bitcode's global variables are in a form older than LLVM 5's")
        module.globals.append((ops[0], ops[1], ops[4]))  # strtab offset, size, type, flags, initialiser id + 1
        module.values.append(None)
    elif code in (_FUNCTION, _ALIAS_OLD, _ALIAS, _IFUNC):
        module.values.append(None)


def _constant_record(code: int, ops: list[int], module: _Module) -> None:
    if code == _SETTYPE:
        return
    if code == _INTEGER and ops:  # sign in the lowest bit
        value = ops[0] >> 1
        module.values.append(-value if ops[0] & 1 else value)
    elif code == _DATA:  # elements of an integer array, as they are
        module.values.append(tuple(ops))
    elif code == _AGGREGATE:  # value ids of the elements
        module.values.append(_Aggregate(tuple(ops)))
    else:
        module.values.append(None)


def _integers(module: _Module, value_id: int) -> tuple[int, ...] | None:
    value = module.values[value_id] if 0 <= value_id < len(module.values) else None
    if isinstance(value, int):
        return (value,)
    if isinstance(value, _Aggregate):
        members = [module.values[i] if 0 <= i < len(module.values) else None for i in value.members]
        integers = [m for m in members if isinstance(m, int)]
        return tuple(integers) if len(integers) == len(members) else None
    return value


def integer_arrays(data: bytes) -> dict[str, tuple[int, ...]]:
    """Every global variable of the bitcode module ``data`` initialised with an integer array (or an integer), by
    name: ``@x = constant [2 x i64] [i64 48, i64 16]`` gives ``{"x": (48, 16)}``. ValueError when ``data`` is not
    bitcode this reader understands."""
    start, end = 0, len(data)
    if len(data) >= 20 and int.from_bytes(data[:4], "little") == _WRAPPER_MAGIC:  # the wrapper some targets use
        start = int.from_bytes(data[8:12], "little")
        end = start + int.from_bytes(data[12:16], "little")
        if end > len(data):
            raise ValueError("the bitcode wrapper names more bytes than there are")
    if data[start:start + 4] != _MAGIC:
        raise ValueError("not LLVM bitcode")
    bits = _Bits(data, start + 4, end)
    module = _Module()
    blockinfo: dict[int, list[list[_Operand]]] = {}
    while bits.end - bits.pos >= 32:
        if bits.read(2) != _ENTER_SUBBLOCK:
            raise ValueError("the bitcode has a record outside any block")
        block, width = bits.vbr(8), bits.vbr(4)
        bits.align32()
        words = bits.read(32)
        after = bits.pos + words * 32
        if after > bits.end:
            raise ValueError("the bitcode ends inside a block")
        if block in (_MODULE, _STRTAB, _BLOCKINFO):
            _walk(bits, block, width, blockinfo, module, 0)
        bits.pos = after
    found: dict[str, tuple[int, ...]] = {}
    for offset, size, initialiser in module.globals:
        if initialiser == 0 or offset + size > len(module.strtab):
            continue
        values = _integers(module, initialiser - 1)
        if values is not None:
            found[module.strtab[offset:offset + size].decode("utf-8", "replace")] = values
    return found
