#!/usr/bin/env python3
"""Recreate issue 43's git-ignored anchor folder .anchors/ from PyPI (stdlib only; run on a machine with PyPI access).

    python benchmarks/workloads/anchors/fetch_anchors.py [--cache DIR] [--anchors DIR] [--no-kit]

from the project root. Downloads the two pinned sdists (vLLM 0.33.0, mamba-ssm 2.3.2.post1) into --cache (default
/tmp/anchor-sdists; a file already there with the pinned sha256 is reused), checks their sha256, extracts the few
files the forward builds need, unchanged (each compiled unit, its whole "..."-include closure, a few reference files
and the LICENSE) into .anchors/vllm-src and .anchors/mamba-src, writes .anchors/KIT.txt (provenance: URLs, sha256 of
the sdists and of every extracted file) and packs .anchors/kit/anchors-kit.tar.xz with make_kit.sh, the one thing
the GPU machine is given (carry ".anchors/kit"). Idempotent: the same pins give the same files and the same kit.

cuda-coop's own files (the tools, vllm_moe_register.cpp, mamba_bwd_stubs.cpp, mamba_nopython/) stay in this folder,
which is tracked and carried with the project; nothing of them is copied into .anchors/. Builds
(.anchors/*-build) are left alone. README.md beside this file tells the rest.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from pathlib import Path, PurePosixPath

OWN = Path(__file__).resolve().parent
ROOT = OWN.parents[2]

SDISTS = {
    "vllm": {
        "file": "vllm-0.33.0.tar.gz",
        "url": "https://files.pythonhosted.org/packages/f7/25/aa5684e9c59d6fc75f78926b7f15e8d9adc7de2d9e6e7575b80776ad"
        "8169/vllm-0.33.0.tar.gz",
        "sha256": "f4c33c2503d52bb411146afa9618a4f48bed68912f617e6803ac8d76e4c74112",
        "top": "vllm-0.33.0",
        "dest": "vllm-src",
        "license": "Apache-2.0",
        # compiled units: they and their "..."-include closure are extracted (include roots: the file's own folder,
        # then these, as vLLM's CMake passes -Icsrc)
        "units": ["csrc/moe/moe_align_sum_kernels.cu"],
        "include_dirs": ["csrc"],
        # reference only, not compiled: where the op's schema and declaration come from
        "reference": ["csrc/moe/torch_bindings.cpp", "csrc/moe/moe_ops.h", "csrc/core/registration.h"],
    },
    "mamba": {
        "file": "mamba_ssm-2.3.2.post1.tar.gz",
        "url": "https://files.pythonhosted.org/packages/af/48/aa7bec0efc7453fa0512276c0069c854bf684219050294266534bf"
        "ef34bb/mamba_ssm-2.3.2.post1.tar.gz",
        "sha256": "104cc47e9101e5401a675fa2b784f2952b9b037f3b1dd83b5ac544394e95d028",
        "top": "mamba_ssm-2.3.2.post1",
        "dest": "mamba-src",
        "license": "Apache-2.0",
        "units": [
            "csrc/selective_scan/selective_scan.cpp",
            "csrc/selective_scan/selective_scan_fwd_fp32.cu",
            "csrc/selective_scan/selective_scan_fwd_fp16.cu",
            "csrc/selective_scan/selective_scan_fwd_bf16.cu",
        ],
        "include_dirs": ["csrc/selective_scan"],
        "reference": ["setup.py"],  # the extension's sources and flags
    },
}
SOURCE_SUFFIXES = (".h", ".hpp", ".cuh", ".cu", ".cpp", ".inl")
INCLUDE = re.compile(rb'^\s*#\s*include\s*"([^"]+)"', re.MULTILINE)


def log(msg: str) -> None:
    print(f"[fetch_anchors] {msg}", flush=True)


def sha256_of(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def download(spec: dict, cache: Path) -> Path:
    """The sdist in ``cache``, downloaded unless a copy with the pinned sha256 is there; its sha256 checked."""
    cache.mkdir(parents=True, exist_ok=True)
    path = cache / spec["file"]
    if path.is_file() and sha256_of(path) == spec["sha256"]:
        log(f"{spec['file']}: cached ({path}), sha256 ok")
        return path
    part = path.with_name(path.name + ".part")
    start = time.perf_counter()
    log(f"{spec['file']}: downloading {spec['url']}")
    with urllib.request.urlopen(spec["url"], timeout=120) as resp, open(part, "wb") as fh:
        shutil.copyfileobj(resp, fh, 1 << 20)
    got = sha256_of(part)
    if got != spec["sha256"]:
        part.unlink()
        sys.exit(f"fetch_anchors: {spec['file']}: sha256 {got}, expected {spec['sha256']} (download refused)")
    part.replace(path)
    log(f"{spec['file']}: {path.stat().st_size / 2**20:.1f} MiB in {time.perf_counter() - start:.1f} s, sha256 ok")
    return path


def read_members(sdist: Path, spec: dict) -> dict[str, bytes]:
    """Every source file, the LICENSE and the reference files of the sdist, by path below its top folder."""
    wanted = {"LICENSE", *spec["reference"]}
    files: dict[str, bytes] = {}
    with tarfile.open(sdist, "r:gz") as tar:
        for member in tar:
            if not member.isfile():
                continue
            parts = PurePosixPath(member.name).parts
            if len(parts) < 2 or parts[0] != spec["top"] or ".." in parts:
                continue
            rel = "/".join(parts[1:])
            if rel in wanted or rel.endswith(SOURCE_SUFFIXES):
                fh = tar.extractfile(member)
                assert fh is not None
                files[rel] = fh.read()
    return files


def include_closure(files: dict[str, bytes], spec: dict) -> list[str]:
    """The units and every file they reach through #include "..." (resolved as the compiler would: the including
    file's folder first, then the include roots); an include found nowhere in the sdist is a system/toolkit header."""
    todo, seen = list(spec["units"]), set()
    while todo:
        rel = todo.pop()
        if rel in seen:
            continue
        if rel not in files:
            sys.exit(f"fetch_anchors: {spec['top']}/{rel} is not in {spec['file']}")
        seen.add(rel)
        here = PurePosixPath(rel).parent
        for name in INCLUDE.findall(files[rel]):
            target = name.decode()
            for base in [str(here), *spec["include_dirs"]]:
                cand = os.path.normpath(str(PurePosixPath(base) / target))
                if cand in files:
                    todo.append(cand)
                    break
    return sorted(seen)


def extract(spec: dict, files: dict[str, bytes], anchors: Path) -> list[tuple[str, str, str]]:
    """Write the closure, the reference files and the LICENSE, unchanged, into anchors/<dest> (replaced whole);
    returns (path, role, sha256) rows for KIT.txt."""
    closure = include_closure(files, spec)
    rows = [(rel, "compiled" if rel in spec["units"] else "included", "") for rel in closure]
    rows += [(rel, "reference only", "") for rel in spec["reference"] if rel not in closure]
    rows.append(("LICENSE", spec["license"], ""))
    dest = anchors / spec["dest"]
    tmp = anchors / (spec["dest"] + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    out = []
    for rel, role, _ in rows:
        if rel not in files:
            sys.exit(f"fetch_anchors: {spec['top']}/{rel} is not in {spec['file']}")
        path = tmp / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[rel])
        path.chmod(0o644)
        out.append((rel, role, hashlib.sha256(files[rel]).hexdigest()))
    shutil.rmtree(dest, ignore_errors=True)
    tmp.rename(dest)
    log(f"{spec['dest']}/: {len(out)} files from {spec['file']} ({sum(len(files[r]) for r, _, _ in out) // 1024} KiB)")
    return out


def kit_text(extracted: dict[str, list[tuple[str, str, str]]]) -> str:
    lines = [
        "cuda-coop issue 43 anchor kit: .anchors/ (git-ignored, never committed), made by",
        "    python benchmarks/workloads/anchors/fetch_anchors.py",
        "Third-party files, unchanged, from the PyPI sdists below; cuda-coop's own files (the tools,",
        "vllm_moe_register.cpp, mamba_bwd_stubs.cpp, mamba_nopython/) live in benchmarks/workloads/anchors/ (tracked).",
        "",
    ]
    for key, spec in SDISTS.items():
        lines += [f"  {spec['file']:<30} sha256 {spec['sha256']}", f"  {'':<30} {spec['url']}"]
    for key, spec in SDISTS.items():
        lines += ["", f"{spec['dest']}/  ({spec['top']}, {spec['license']}: {spec['dest']}/LICENSE)"]
        lines += [f"  {rel:<50} {role:<15} sha256 {digest}" for rel, role, digest in extracted[key]]
    lines += [
        "",
        "Built on the GPU machine by benchmarks/workloads/anchors/gpu_run43.sh (README.md there):",
        "  vllm:  csrc/moe/moe_align_sum_kernels.cu + vllm_moe_register.cpp",
        "         -> .anchors/vllm-moe-build/libvllm_moe_align.so (torch.ops.coop_vllm.moe_align_block_size)",
        "  mamba: csrc/selective_scan/selective_scan.cpp + selective_scan_fwd_{fp32,fp16,bf16}.cu",
        "         + mamba_bwd_stubs.cpp",
        "         -> .anchors/mamba-build/selective_scan_cuda<EXT_SUFFIX>.so (fwd; bwd raises 'backward not built')",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="fetch_anchors.py", description=__doc__.splitlines()[0])
    p.add_argument("--cache", default=os.environ.get("ANCHOR_SDISTS", "/tmp/anchor-sdists"), help="sdist cache")
    p.add_argument("--anchors", default=os.environ.get("ANCHORS_DIR") or str(ROOT / ".anchors"), help="output folder")
    p.add_argument("--no-kit", action="store_true", help="extract and write KIT.txt, but do not pack the kit")
    args = p.parse_args(argv)

    start = time.perf_counter()
    anchors = Path(args.anchors).resolve()
    anchors.mkdir(parents=True, exist_ok=True)
    extracted = {}
    for key, spec in SDISTS.items():
        sdist = download(spec, Path(args.cache))
        extracted[key] = extract(spec, read_members(sdist, spec), anchors)
    (anchors / "KIT.txt").write_text(kit_text(extracted))
    stale = anchors / "tools"  # the tools of the earlier, untracked recipe: they now live in this folder
    if stale.is_dir():
        shutil.rmtree(stale)
        log(f"removed {stale} (the tools are benchmarks/workloads/anchors/*, tracked)")
    (anchors / ".kit-unpacked").unlink(missing_ok=True)  # unpack_kit.sh compares against the kit packed next
    if not args.no_kit:
        env = dict(os.environ, ANCHORS_DIR=str(anchors))
        subprocess.run(["bash", str(OWN / "make_kit.sh")], check=True, env=env)
    log(f"done in {time.perf_counter() - start:.1f} s: {anchors}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
