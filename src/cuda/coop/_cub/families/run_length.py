"""CUB BlockRunLengthDecode providers (docs: operations/run_length_decode): the run table, its stream checks, windowed
and bulk decoding.

The run table is built from offsets this provider scans itself (the same raking-memoize BlockScan CUB uses in its
lengths constructor) so that every stream rule is checked where the data is: a negative length, a zero length
followed by a positive one, and a total beyond the offset type (an exclusive prefix in that type wraps exactly at
the run whose end passes its maximum) each trap. The scan's storage sits beside the table's rather than in a union
with it, so no barrier separates the scan from the table's writes.
"""
from __future__ import annotations

from ..._semantics.common import c_type
from ..._semantics.run_length import RunLengthSpec, decodes_into
from ..provider import SCRATCH_PARAMS, CParam, Provider, c_signature, reuse_barrier


def _table(spec: RunLengthSpec, offset_t: str) -> tuple[str, list[str]]:
    """The scratch struct and the lines that build the table (``table``, ``total``) or trap."""
    t, r, d, threads = c_type(spec.value_dtype), spec.runs_per_thread, spec.decoded_items_per_thread, spec.threads
    length_t = c_type(spec.length_dtype)
    table_t = f"cub::BlockRunLengthDecode<{t}, {threads}, {r}, {d}, {offset_t}>"
    scan_t = f"cub::BlockScan<{offset_t}, {threads}, cub::BLOCK_SCAN_RAKING_MEMOIZE>"
    scratch = (f"struct @SYM@_scratch {{\n  typename {scan_t}::TempStorage scan;\n"
               f"  typename {table_t}::TempStorage table;\n"
               f"  unsigned char last_run_empty[{threads}];"
               "  // read by the next member after the table's barrier\n};\n")
    signed = not spec.length_dtype.startswith("u")
    too_long = spec.length_dtype.endswith("64") and spec.offset_dtype == "uint32"
    checks = []
    if signed:
        checks.append("length < 0")
    if too_long:
        checks.append("(unsigned long long)length > 0xffffffffull")
    lines = [
        "  @SYM@_scratch& s = *reinterpret_cast<@SYM@_scratch*>(scratch);",
        "  const unsigned rank = threadIdx.x;",
        f"  {t} values[{r}];  // CUB takes the values by mutable reference: a private copy keeps the input",
        f"  {offset_t} terms[{r}];",
        "  bool malformed = false;",
        f"  for (int i = 0; i < {r}; ++i) {{",
        f"    const {length_t} length = run_lengths[i];",
        "    values[i] = run_values[i];",
        *([f"    malformed |= {' || '.join(checks)};"] if checks else []),
        "    malformed |= i > 0 && run_lengths[i - 1] == 0 && length > 0;  // zero padding must come last",
        f"    terms[i] = ({offset_t})length;",
        "  }",
        f"  {offset_t} offsets[{r}];",
        f"  {offset_t} total;",
        f"  {scan_t}(s.scan).ExclusiveSum(terms, offsets, total);",
        f"  for (int i = 0; i < {r}; ++i) {{",
        f"    malformed |= ({offset_t})(offsets[i] + terms[i]) < offsets[i];  // the total overflows {offset_t}",
        "  }",
        f"  s.last_run_empty[rank] = run_lengths[{r} - 1] == 0;",
        f"  {table_t} table(s.table, values, offsets);  // stores the table, then a block barrier",
        "  malformed |= rank > 0 && s.last_run_empty[rank - 1] && run_lengths[0] > 0;",
        "  if (malformed) __trap();  // SPEC 10.2: a malformed run-length stream",
    ]
    if spec.total_dtype is not None:
        lines.append(f"  total_decoded_size[0] = ({c_type(spec.total_dtype)})total;")
    return scratch, lines


def _window(spec: RunLengthSpec, t: str, offset_t: str) -> list[str]:
    d = spec.decoded_items_per_thread
    lines = [
        "  cuda_coop::check_range(window_offset, 0, 0x7fffffffffffffffll);",
        # CUB's decoding is undefined past the total: start there and mask every position beyond it.
        f"  const {offset_t} from = (unsigned long long)window_offset < total ? ({offset_t})window_offset : total;",
        f"  {t} decoded[{d}];",
        f"  {offset_t} relative[{d}];",
        "  table.RunLengthDecode(decoded, relative, from);",
        f"  const unsigned long long first = (unsigned long long)window_offset + (unsigned long long)rank * {d}u;",
        f"  const {t} zero{{}};",  # value-initialised: zero, for aggregates too
        f"  for (int i = 0; i < {d}; ++i) {{",
        "    const bool inside = first + i < total;",
        "    output[i] = inside ? decoded[i] : zero;",
    ]
    if spec.relative_offsets:
        lines.append(f"    relative_offsets[i] = inside ? relative[i] : ({offset_t})~({offset_t})0;"
                     "  // past the end: max")
    return lines + ["  }"]


def _fits(capacity: str, what: str) -> str:
    return (f"  if ({capacity} < 0 || (unsigned long long)total > (unsigned long long){capacity} || "
            f"(unsigned long long)destination_offset > (unsigned long long){capacity} - total) "
            f"__trap();  // SPEC 10.2: {what} is too short")


def _bulk(spec: RunLengthSpec, t: str, offset_t: str) -> list[str]:
    """Window after window until the stream ends; each member writes its D consecutive items (CUB's blocked
    direct store). The loop stops at the last window instead of stepping past the total, so the window offset
    never overflows its type, and positions are 32-bit offsets from the window's start."""
    d, window = spec.decoded_items_per_thread, spec.window_items
    relative = spec.relative_offsets
    store = ("segment[first + i] = decoded[i];"
             + (" relative_segment[first + i] = relative[i];" if relative else ""))
    lines = ["  cuda_coop::check_range(destination_offset, 0, 0x7fffffffffffffffll);",
             _fits("capacity", "the destination")]
    if relative:
        lines.append(_fits("relative_capacity", "relative_offsets_destination"))
        lines.append(f"  {offset_t}* rel = relative_destination + destination_offset;")
    return lines + [
        f"  {t}* out = destination + destination_offset;",
        f"  const unsigned first = rank * {d}u;",
        f"  for ({offset_t} window = 0; window < total;) {{",
        f"    {t} decoded[{d}];",
        f"    {offset_t} relative[{d}];",
        "    table.RunLengthDecode(decoded, relative, window);",
        f"    {t}* segment = out + window;",
        *([f"    {offset_t}* relative_segment = rel + window;"] if relative else []),
        f"    const {offset_t} left = total - window;",
        f"    if (left > {window}u) {{  // a full window, and more to come: no bounds checks",
        f"      for (int i = 0; i < {d}; ++i) {{ {store} }}",
        f"      window += {window}u;",
        "    } else {",
        f"      for (int i = 0; i < {d}; ++i) if (first + i < left) {{ {store} }}",
        "      break;",
        "    }",
        "  }",
    ]


def emit(spec: RunLengthSpec) -> Provider:
    t, length_t, offset_t = c_type(spec.value_dtype), c_type(spec.length_dtype), c_type(spec.offset_dtype)
    scratch, lines = _table(spec, offset_t)
    into = decodes_into(spec.op)
    params = [CParam("ptr", f"const {t}*", "run_values"), CParam("ptr", f"const {length_t}*", "run_lengths")]
    if spec.total_dtype is not None:
        params.append(CParam("ptr", f"{c_type(spec.total_dtype)}*", "total_decoded_size"))
    if into:
        lines += _bulk(spec, t, offset_t)
        params += [CParam("ptr", f"{t}*", "destination"), CParam("len", "long long", "capacity")]
        if spec.relative_offsets:
            params += [CParam("ptr", f"{offset_t}*", "relative_destination"),
                       CParam("len", "long long", "relative_capacity")]
        params.append(CParam("i64", "long long", "destination_offset"))
    else:
        lines += _window(spec, t, offset_t)
        params.append(CParam("ptr", f"{t}*", "output"))
        if spec.relative_offsets:
            params.append(CParam("ptr", f"{offset_t}*", "relative_offsets"))
        params.append(CParam("i64", "long long", "window_offset"))
    params += SCRATCH_PARAMS
    if spec.barrier:
        lines.append(reuse_barrier(None))
    if into:
        lines.append("  return total;")
    result = offset_t if into else "void"
    body = scratch + f'extern "C" __device__ {result} @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    headers = ("cub/block/block_run_length_decode.cuh", "cub/block/block_scan.cuh")
    return Provider.make(spec.op, headers, body, "@SYM@_scratch", params)
