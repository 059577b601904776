"""The "first result" row (issue 12, item 5f): README.md's main example in a new process with an empty cuda-coop
cache, from the first import to a checked output.

The example is read from README.md at run time (its first ``python`` block that defines a ``cuda.jit`` kernel), so
the row follows the README. A check is appended: the example's output array ``out`` must equal its input ``x`` (the
README example copies tiles). The process gets fresh XDG_CACHE_HOME and NUMBA_CUDA_MLIR_CACHE_DIR directories:
nothing is cached, as on a new machine (the Python bytecode of the installed packages aside).
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import ROOT

_CHECK = '''
import json as _json
import time as _time
from numba_cuda_mlir import cuda as _cuda

_cuda.synchronize()
_ok = bool(np.array_equal(out, x))
_seconds = _time.perf_counter() - _BENCH_T0
try:
    from cuda.coop._cub import nvrtc as _nvrtc
    _stats = dict(_nvrtc.stats)
except Exception:
    _stats = {}
print("BENCH_JSON " + _json.dumps({"seconds": _seconds, "verified": _ok, "elements": int(x.size), **_stats}))
'''


def readme_example(readme: Path = ROOT / "README.md") -> str:
    """The README's main example: its first fenced python block with a ``cuda.jit`` kernel."""
    for block in re.findall(r"```python\n(.*?)```", readme.read_text(), flags=re.DOTALL):
        if "@cuda.jit" in block and "coop" in block:
            return block
    raise ValueError(f"no python example with a @cuda.jit kernel in {readme}")


def script(example: str) -> str:
    if not re.search(r"^out\b", example, flags=re.MULTILINE) or not re.search(r"^x\b", example, flags=re.MULTILINE):
        raise ValueError("the README example no longer defines `x` and `out`: update benchmarks/first_result.py")
    return "import time as _bench_time\n_BENCH_T0 = _bench_time.perf_counter()\n" + example + _CHECK


def run(dry: bool) -> list[dict]:
    base = {"type": "first_result", "source": "README.md main example"}
    try:
        text = script(readme_example())
    except Exception as exc:
        return [{**base, "error": f"{type(exc).__name__}: {exc}"}]
    with tempfile.TemporaryDirectory(prefix="coop-first-result-") as tmp:
        path = Path(tmp) / "readme_example.py"
        path.write_text(text)
        env = dict(os.environ)
        env["XDG_CACHE_HOME"] = str(Path(tmp) / "xdg")
        env["NUMBA_CUDA_MLIR_CACHE_DIR"] = str(Path(tmp) / "numba")
        env.pop("CUDA_COOP_DISABLE_CACHE", None)
        start = time.perf_counter()
        done = subprocess.run([sys.executable, str(path)], cwd=tmp, env=env, capture_output=True, text=True,
                              timeout=600, check=False)
        wall = time.perf_counter() - start
    found = [json.loads(line[len("BENCH_JSON "):]) for line in done.stdout.splitlines()
             if line.startswith("BENCH_JSON ")]
    if found and done.returncode == 0:
        record = {**base, "process_seconds": wall, "script_seconds": found[0]["seconds"],
                  "verified": found[0]["verified"], "nvrtc_runs": found[0].get("nvrtc_runs"),
                  "nvrtc_seconds": found[0].get("nvrtc_seconds")}
        if not record["verified"]:
            record["error"] = "the README example's output differs from its input"
        print(f"first result: {wall:.2f} s from process start to checked output "
              f"({record['script_seconds']:.2f} s in the script; NVRTC {record['nvrtc_seconds'] or 0:.2f} s in "
              f"{record['nvrtc_runs']} runs); verified {record['verified']}", flush=True)
        return [record]
    errors = [line for line in done.stderr.splitlines() if re.match(r"^[\w.]+(Error|Exception)\b", line)]
    last = (errors or done.stderr.strip().splitlines() or ["no output"])[-1][:300]
    if dry:  # no GPU: the example builds at its launch, which fails here; the row only checks the plumbing
        print(f"first result (dry): the README example ran to its launch in {wall:.2f} s and stopped there: {last}",
              flush=True)
        return [{**base, "dry": True, "process_seconds": wall, "note": f"no GPU: {last}"}]
    return [{**base, "process_seconds": wall, "error": f"rc {done.returncode}: {done.stderr[-3000:]}"}]
