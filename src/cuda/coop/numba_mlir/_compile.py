"""compile_kernel: build a cooperative kernel for one launch shape without a GPU
(docs: api/numba_mlir, "Building without a GPU")."""
from __future__ import annotations

import shutil
import struct
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from .._errors import CoopTypeError
from .._semantics.targets import KNOWN_ARCHITECTURES, parse_target


def _dim3(value: int | Sequence[int]) -> tuple[int, int, int]:
    dims = (value,) if isinstance(value, int) else tuple(value)
    return tuple(dims) + (1,) * (3 - len(dims))  # type: ignore[return-value]


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


def _arg_name(py_func: Any, index: int) -> str:
    import inspect

    try:
        return list(inspect.signature(py_func).parameters)[index]
    except (TypeError, ValueError, IndexError):
        return str(index)


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
    metadata: dict = field(default_factory=dict, repr=False)

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


def _buildable_architectures() -> tuple[int, ...]:
    """The known architectures NVRTC can build for (all known ones when it cannot be asked)."""
    try:
        from cuda.bindings import nvrtc

        err, archs = nvrtc.nvrtcGetSupportedArchs()
        if int(err) == 0 and archs:
            return tuple(cc for cc in KNOWN_ARCHITECTURES if cc in set(archs))
    except Exception:  # an NVRTC without the query: the build itself reports what it cannot do
        pass
    return KNOWN_ARCHITECTURES


def compile_kernel(kernel: Any, args: Sequence[Any], /, *, block: int | Sequence[int], grid: int | Sequence[int] = 1,
                   target: str = "sm_90") -> CompiledKernel:
    """Build ``kernel`` for ``kernel[grid, block](*args)`` on ``target`` without launching it.

    ``args`` are sample arguments or numba types; integer values are specialised
    exactly as a launch would. Raises the same compile-time errors as a launch.
    """
    py_func = getattr(kernel, "py_func", kernel)
    target, _ = parse_target(target, _buildable_architectures())
    options = dict(getattr(kernel, "targetoptions", {}) or {})
    options["chip"] = target
    options["__launch_config__"] = {"grid": _dim3(grid), "block": _dim3(block), "sharedmem": 0, "cluster": None}
    from . import _compat as nb  # numba-cuda-mlir's internals load with the first build, not on import

    argtypes = [a if isinstance(a, nb.types.Type) else nb.typeof(a) for a in args]
    while True:
        try:
            cres = nb.compile_for_launch(py_func, list(argtypes), options)
            break
        except nb.ForceLiteralArg as request:
            progressed = False
            for index in request.requested_args:
                value = args[index]
                if isinstance(value, nb.types.Type) or isinstance(argtypes[index], nb.types.Literal):
                    raise CoopTypeError(
                        f"compile_kernel argument {_arg_name(py_func, index)!r} is used as a compile-time integer "
                        "(e.g. items_per_thread); "
                        f"pass its value instead of the type {value}"
                    ) from None
                # a NumPy integer specialises like the Python int it holds
                argtypes[index] = nb.literal_type(int(value) if isinstance(value, np.integer) else value)
                progressed = True
            if not progressed:
                raise
    cubin = cres.metadata["cubin"]
    sections = _elf_sections(cubin)
    text = next(n for n in sections if n.startswith(".text."))
    name = text[len(".text."):]
    dynamic = cres.metadata.get("required_dynamic_shared_memory", 0)
    shared = sections.get(f".nv.shared.{name}", (0, 0, 0))[1]
    attributes = _eiattrs(cubin, [sections[s] for s in (".nv.info", f".nv.info.{name}") if s in sections])
    registers = attributes.get(0x2F, 0)  # EIATTR_REGCOUNT
    local = attributes.get(0x11, 0)  # EIATTR_FRAME_SIZE
    coop = cres.metadata.get("cuda_coop", {})
    return CompiledKernel(cubin, name, coop.get("cpp_source", ""), registers, shared + dynamic, local, dynamic,
                          dict(coop))
