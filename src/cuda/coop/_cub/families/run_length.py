"""CUB BlockRunLengthDecode providers (SPEC 8.15): the run table, its stream checks, windowed and bulk decoding.

The run table is built from offsets this provider scans itself (the same raking-memoize BlockScan CUB uses in its
lengths constructor) so that every stream rule is checked where the data is: a negative length, a zero length
followed by a positive one, and a total beyond ``uint32`` (a 32-bit exclusive prefix wraps exactly at the run
whose end passes 2**32) each trap. The scan's storage sits beside the table's rather than in a union with it, so
no barrier separates the scan from the table's writes.
"""
from __future__ import annotations

from ..._semantics.common import c_type
from ..._semantics.run_length import INTO, RunLengthSpec
from ..provider import Provider, reuse_barrier


def _table(spec: RunLengthSpec) -> tuple[str, str, list[str]]:
    """The scratch struct, the table type and the lines that build the table (``table``, ``total``) or trap."""
    t, r, d, threads = c_type(spec.value_dtype), spec.runs_per_thread, spec.decoded_items_per_thread, spec.threads
    length_t = c_type(spec.length_dtype)
    table_t = f"cub::BlockRunLengthDecode<{t}, {threads}, {r}, {d}, unsigned int>"
    scan_t = f"cub::BlockScan<unsigned int, {threads}, cub::BLOCK_SCAN_RAKING_MEMOIZE>"
    scratch = (f"struct @SYM@_scratch {{\n  typename {scan_t}::TempStorage scan;\n"
               f"  typename {table_t}::TempStorage table;\n"
               f"  unsigned char last_run_empty[{threads}];  // read by the next member after the table's barrier\n}};\n")
    signed = not spec.length_dtype.startswith("u")
    wide = spec.length_dtype.endswith("64")
    negative = "length < 0" if signed else "false"
    too_long = "(unsigned long long)length > 0xffffffffull" if wide else "false"
    lines = [
        "  @SYM@_scratch& s = *reinterpret_cast<@SYM@_scratch*>(scratch);",
        "  const unsigned rank = threadIdx.x;",
        f"  {t} values[{r}];  // CUB takes the values by mutable reference: a private copy keeps the input",
        f"  unsigned int terms[{r}];",
        "  bool malformed = false;",
        f"  for (int i = 0; i < {r}; ++i) {{",
        f"    const {length_t} length = run_lengths[i];",
        "    values[i] = run_values[i];",
        f"    malformed |= ({negative}) || ({too_long});",
        "    malformed |= i > 0 && run_lengths[i - 1] == 0 && length > 0;  // zero padding must come last",
        "    terms[i] = (unsigned int)length;",
        "  }",
        f"  unsigned int offsets[{r}];",
        "  unsigned int total;",
        f"  {scan_t}(s.scan).ExclusiveSum(terms, offsets, total);",
        f"  for (int i = 0; i < {r}; ++i) {{",
        "    malformed |= (unsigned long long)offsets[i] + terms[i] > 0xffffffffull;  // the total overflows uint32",
        "  }",
        f"  s.last_run_empty[rank] = run_lengths[{r} - 1] == 0;",
        f"  {table_t} table(s.table, values, offsets);  // stores the table, then __syncthreads()",
        "  malformed |= rank > 0 && s.last_run_empty[rank - 1] && run_lengths[0] > 0;",
        "  if (malformed) __trap();  // SPEC 10.2: a malformed run-length stream",
    ]
    return scratch, table_t, lines


def _window(spec: RunLengthSpec, t: str) -> list[str]:
    d = spec.decoded_items_per_thread
    return [
        "  cuda_coop::check_range(window_offset, 0, 0x7fffffffffffffffll);",
        # CUB's decoding is undefined past the total: start there and zero every position beyond it.
        "  const unsigned int from = (unsigned long long)window_offset < total ? (unsigned int)window_offset : total;",
        f"  {t} decoded[{d}];",
        "  table.RunLengthDecode(decoded, from);",
        f"  const unsigned long long first = (unsigned long long)window_offset + (unsigned long long)rank * {d}u;",
        f"  for (int i = 0; i < {d}; ++i) output[i] = first + i < total ? decoded[i] : ({t})0;",
    ]


def _bulk(spec: RunLengthSpec, t: str) -> list[str]:
    d, window = spec.decoded_items_per_thread, spec.window_items
    return [
        "  cuda_coop::check_range(destination_offset, 0, 0x7fffffffffffffffll);",
        "  if (capacity < 0 || (unsigned long long)destination_offset + total > (unsigned long long)capacity) "
        "__trap();  // SPEC 10.2: the destination is too short",
        f"  {t}* out = destination + destination_offset;",
        f"  for (unsigned long long window = 0; window < total; window += {window}ull) {{",
        f"    {t} decoded[{d}];",
        "    table.RunLengthDecode(decoded, (unsigned int)window);",
        f"    const unsigned long long first = window + (unsigned long long)rank * {d}u;",
        f"    if (window + {window}ull <= total) {{  // a full window: no bounds checks",
        f"      for (int i = 0; i < {d}; ++i) out[first + i] = decoded[i];",
        "    } else {",
        f"      for (int i = 0; i < {d}; ++i) if (first + i < total) out[first + i] = decoded[i];",
        "    }",
        "  }",
    ]


def emit(spec: RunLengthSpec) -> Provider:
    t, length_t = c_type(spec.value_dtype), c_type(spec.length_dtype)
    scratch, _, lines = _table(spec)
    operands = f"const {t}* run_values, const {length_t}* run_lengths"
    if spec.op == INTO:
        lines += _bulk(spec, t)
        signature = (f'extern "C" __device__ unsigned int @SYM@({operands}, {t}* destination, long long capacity, '
                     "long long destination_offset, char* scratch, unsigned long long stride)")
    else:
        lines += _window(spec, t)
        signature = (f'extern "C" __device__ void @SYM@({operands}, {t}* output, long long window_offset, '
                     "char* scratch, unsigned long long stride)")
    if spec.barrier:
        lines.append(reuse_barrier(None))
    if spec.op == INTO:
        lines.append("  return total;")
    body = scratch + signature + " {\n" + "\n".join(lines) + "\n}\n"
    headers = ("cub/block/block_run_length_decode.cuh", "cub/block/block_scan.cuh")
    return Provider.make(spec.op, headers, body, "@SYM@_scratch")
