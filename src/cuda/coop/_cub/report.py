"""What a kernel build produced, read from its cubin: registers, shared and local memory, and its SASS
(the report of ``compile_kernel`` in every backend; docs: api/numba_mlir, "Building without a GPU")."""
from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


def _elf_sections(cubin: bytes) -> dict[str, tuple[int, int, int]]:
    """name -> (offset, size, sh_info) of every section of a 64-bit ELF."""
    shoff, = struct.unpack_from("<Q", cubin, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", cubin, 0x3A)
    headers = [struct.unpack_from("<IIQQQQIIQQ", cubin, shoff + i * shentsize) for i in range(shnum)]
    strtab = headers[shstrndx]
    names = cubin[strtab[4]:strtab[4] + strtab[5]]
    out = {}
    for h in headers:
        name = names[h[0]:names.index(b"\0", h[0])].decode()
        out[name] = (h[4], h[5], h[7])
    return out


FATBIN_MAGIC = b"\x50\xed\x55\xba"
ELF_MAGIC = b"\x7fELF"


def cubin_of(binary: bytes) -> bytes | None:
    """The sm cubin inside a fatbin (or the cubin itself), None when it holds none: what a compiler's device binary
    holds."""
    if binary.startswith(ELF_MAGIC):
        return binary
    at = binary.find(ELF_MAGIC)
    if not binary.startswith(FATBIN_MAGIC) or at < 0:
        return None
    # an uncompressed fatbin entry: the ELF ends where the last of its header tables and sections ends
    phoff, shoff = struct.unpack_from("<QQ", binary, at + 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", binary, at + 0x36)
    end = max(shoff + shentsize * shnum, phoff + phentsize * phnum)
    for index in range(shnum):
        offset, size = struct.unpack_from("<QQ", binary, at + shoff + index * shentsize + 0x18)
        kind, = struct.unpack_from("<I", binary, at + shoff + index * shentsize + 4)
        if kind != 8:  # SHT_NOBITS occupies no bytes of the file
            end = max(end, offset + size)
    return binary[at:at + end]


def _tool(name: str) -> str | None:
    try:
        from cuda.pathfinder import find_nvidia_binary_utility

        found = find_nvidia_binary_utility(name)
        if found:
            return str(found)
    except Exception:
        pass
    return shutil.which(name)


def _eiattrs(cubin: bytes, infos: list[tuple[int, int, int]]) -> dict[int, int]:
    """EIATTR records (format u8, attribute u8, size u16, payload) that carry (symbol, value)."""
    found: dict[int, int] = {}
    for offset, size, _ in infos:
        pos, end = offset, offset + size
        while pos + 4 <= end:
            fmt, attr, length = struct.unpack_from("<BBH", cubin, pos)
            if fmt != 0x04:  # other formats keep their value in the length field
                pos += 4
                continue
            if length == 8:
                found[attr] = struct.unpack_from("<I", cubin, pos + 8)[0]
            pos += 4 + length
    return found


@dataclass
class CompiledKernel:
    """A kernel built for one launch shape: its cubin and what it uses."""

    cubin: bytes
    name: str
    cpp_source: str
    registers: int
    shared_memory_bytes: int
    local_memory_bytes: int
    dynamic_shared_memory_bytes: int = 0
    metadata: dict[str, Any] = field(default_factory=dict, repr=False)

    def __repr__(self) -> str:
        return (f"<CompiledKernel {self.name[:60]}: {len(self.cubin)} B cubin, {self.registers} registers, "
                f"{self.shared_memory_bytes} B shared, {self.local_memory_bytes} B local>")

    def sass(self) -> str:
        """Disassembly (needs cuobjdump or nvdisasm from the CUDA toolkit)."""
        tool = _tool("cuobjdump")
        if tool is None:
            raise RuntimeError("cuda.coop compile_kernel(...).sass() needs cuobjdump; install cuda-toolkit[cuobjdump]")
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / "kernel.cubin"
            path.write_bytes(self.cubin)
            done = subprocess.run([tool, "-sass", str(path)], capture_output=True, text=True)
            if done.returncode != 0:  # cuobjdump needs nvdisasm beside it for SASS
                raise RuntimeError(f"cuobjdump -sass failed: {done.stderr.strip()}; install cuda-toolkit[nvdisasm]")
            return done.stdout




def report(cubin: bytes, cpp_source: str, dynamic_shared: int = 0, metadata: dict[str, Any] | None = None,
           name: str | None = None) -> CompiledKernel:
    """The report of one kernel of ``cubin`` (``name``: its symbol; the first kernel when None)."""
    sections = _elf_sections(cubin)
    if name is None:
        text = next(n for n in sections if n.startswith(".text.") and f".nv.info.{n[6:]}" in sections)
        name = text[len(".text."):]
    shared = sections.get(f".nv.shared.{name}", (0, 0, 0))[1]
    attributes = _eiattrs(cubin, [sections[s] for s in (".nv.info", f".nv.info.{name}") if s in sections])
    registers = attributes.get(0x2F, 0)  # EIATTR_REGCOUNT
    local = attributes.get(0x11, 0)  # EIATTR_FRAME_SIZE
    return CompiledKernel(cubin, name, cpp_source, registers, shared + dynamic_shared, local, dynamic_shared,
                          dict(metadata or {}))
