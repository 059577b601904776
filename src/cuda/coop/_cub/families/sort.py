"""CUB BlockMergeSort / WarpMergeSort / BlockRadixSort providers, and top-k: a block's through BlockRadixSort, a
warp group's through our WarpTopK (include/cuda_coop/warp/warp_topk.cuh: CUB's WarpMergeSort or our bitonic network
over the lanes, of the keys' ordered representation) (docs: operations/merge_sort; operations/radix_sort;
operations/topk)."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..._semantics.common import BLOCK, c_type, itemsize
from ..._semantics.sort import RankSpec, SortSpec
from ..provider import SCRATCH_PARAMS, Abi, CParam, Provider, c_signature, reuse_barrier
from .operators import predicate_functor

_UNSIGNED = {1: "unsigned char", 2: "unsigned short", 4: "unsigned int", 8: "unsigned long long"}


@dataclass
class _Parts:
    algo: str
    headers: tuple[str, ...]
    params: list[CParam]  # the C ABI parameters between the outputs and the scratch
    sort: list[str]  # statements sorting ``out`` (and ``out_values``) in place
    prologue: list[str] = field(default_factory=list)  # statements before the CUB object is constructed
    decl: str = ""  # declarations before the provider (a user compare_op's functor)
    scratch: bool = True  # the algorithm's TempStorage lives in the call's scratch (False: a local, empty one)


def _merge(spec: SortSpec, t: str, v: str, operands: str) -> _Parts:
    bx, by, bz = spec.block
    k = spec.items_per_thread
    compare = f"::cuda::std::{'greater' if spec.descending else 'less'}<{t}>{{}}"
    method, decl = "Sort", ""
    # the user's predicate, through CUB's documented-stable entry point
    # (docs: operations/merge_sort, "Custom comparison")
    if spec.compare is not None:
        decl = predicate_functor(spec.compare, t, "@SYM@_compare")
        compare, method = "@SYM@_compare{}", "StableSort"
    if spec.has_valid_items:
        sort = [f"  cuda_coop::check_range(valid_items, 0, {spec.tile_items});",
                f"  algo.{method}({operands}, {compare}, (int)valid_items, oob_default);"]
    else:
        sort = [f"  algo.{method}({operands}, {compare});"]
    params = [CParam(Abi.I64, "long long", "valid_items"), CParam(Abi.ELEM, t, "oob_default")]
    headers = ("cuda/std/functional",)
    if spec.group.kind == BLOCK:
        return _Parts(f"cub::BlockMergeSort<{t}, {bx}, {k}, {v}, {by}, {bz}>",
                      ("cub/block/block_merge_sort.cuh",) + headers, params, sort, decl=decl)
    w = spec.group.size
    prologue = [f"  scratch += cuda_coop::group_instance<{w}>(cuda_coop::linear_rank<{bx}, {by}, {bz}>()) * stride;"]
    return _Parts(f"cub::WarpMergeSort<{t}, {k}, {w}, {v}>", ("cub/warp/warp_merge_sort.cuh",) + headers, params,
                  sort, prologue, decl)


def _radix(spec: SortSpec, t: str, v: str, operands: str) -> _Parts:
    bx, by, bz = spec.block
    # The template arguments after the value type are CUB's defaults, spelled out to reach the block shape.
    algo = (f"cub::BlockRadixSort<{t}, {bx}, {spec.items_per_thread}, {v}, 4, true, cub::BLOCK_SCAN_WARP_SCANS, "
            f"cudaSharedMemBankSizeFourByte, {by}, {bz}>")
    sort = []
    if spec.topk:
        return _topk(spec, t, algo, operands)
    if spec.begin_bit is None or spec.end_bit is None:  # runtime bounds trap outside 0 <= begin < end <= width
        sort += [f"  cuda_coop::check_range(begin_bit, 0, {spec.key_bits - 1});",
                 f"  cuda_coop::check_range(end_bit, begin_bit + 1, {spec.key_bits});"]
    headers: tuple[str, ...] = ("cub/block/block_radix_sort.cuh",)
    params = _longs("begin_bit", "end_bit")
    rank = f"cuda_coop::linear_rank<{bx}, {by}, {bz}>()"
    if spec.has_valid_items:  # a partial tile (docs: operations/radix_sort, "A partial tile")
        sort += [f"  cuda_coop::check_range(valid_items, 0, {spec.tile_items});", *_pad_invalid_keys(spec, t, rank)]
        headers += ("cuda/std/bit",)
        params += _longs("valid_items")
    method = ("SortDescending" if spec.descending else "Sort") + ("BlockedToStriped" if spec.blocked_to_striped else "")
    sort.append(f"  algo.{method}({operands}, (int)begin_bit, (int)end_bit);")
    if spec.has_oob_default:  # the tail of the output, in sorted positions (striped ones with blocked_to_striped)
        if spec.blocked_to_striped:
            sort.append(f"  cuda_coop::pad_striped(out, {rank}, {bx * by * bz}u, valid_items, oob_default);")
        else:
            sort.append(f"  cuda_coop::pad_blocked(out, {rank}, valid_items, oob_default);")
        params.append(CParam(Abi.ELEM, t, "oob_default"))
    return _Parts(algo, headers, params, sort)


def _pad_invalid_keys(spec: SortSpec, t: str, rank: str) -> list[str]:
    """The private copy's keys at blocked positions ``>= valid_items`` become the key whose ordered representation is
    all ones (ascending) or all zeros (descending): it ties with or follows every valid key in any bit range, and the
    stable sort keeps the valid keys, all at earlier positions, ahead of it; the pads keep their input order, so their
    values come out in input order."""
    unsigned = _UNSIGNED[itemsize(spec.key_dtype)]
    return [f"  const {t} padding = ::cuda::std::bit_cast<{t}>(({unsigned}){spec.padding_bits:#x}ull);",
            f"  cuda_coop::pad_blocked(out, {rank}, valid_items, padding);"]


def _topk(spec: SortSpec, t: str, algo: str, operands: str) -> _Parts:
    """Top-k as documented (docs: operations/topk, "Groups, dtypes and limits"): a stable radix sort of the 1-D
    block's tile in which the keys past ``valid_items`` are replaced by the key that sorts last; the first
    min(k, valid_items) positions are the answer."""
    tile = spec.tile_items
    sort = [f"  cuda_coop::check_range(k, 0, {tile});"]
    if spec.has_valid_items:
        sort += [f"  cuda_coop::check_range(valid_items, 0, {tile});", *_pad_invalid_keys(spec, t, "threadIdx.x")]
    method = "SortDescending" if spec.descending else "Sort"
    sort.append(f"  algo.{method}({operands});")
    return _Parts(algo, ("cub/block/block_radix_sort.cuh", "cuda/std/bit"), _longs("k", "valid_items"), sort)


_KEY_KINDS = {"u": "UNSIGNED", "i": "SIGNED", "f": "FLOATING"}


def _warp_topk(spec: SortSpec, t: str, v: str, operands: str) -> _Parts:
    """Top-k of a warp group's own tile (docs: operations/topk, "Warps and logical warps"): WarpTopK sorts the tile's
    ordered representation, ascending for the smallest keys, descending for the largest, and maps the keys back; the
    first min(k, valid_items) blocked positions are the answer. One key per lane takes CUB's shuffle network (no
    scratch); more take WarpMergeSort in the group's slice of the scratch."""
    bx, by, bz = spec.block
    w, tile = spec.group.size, spec.tile_items
    kind = _KEY_KINDS[spec.key_dtype[0]]
    algo = (f"cuda_coop::WarpTopK<{t}, cuda_coop::KeyKind::{kind}, {spec.items_per_thread}, {w}, {v}, "
            f"{str(spec.descending).lower()}, {str(spec.bitonic).lower()}>")
    sort = [f"  cuda_coop::check_range(k, 0, {tile});"]
    if spec.has_valid_items:
        sort += [f"  cuda_coop::check_range(valid_items, 0, {tile});",
                 f"  algo.Select<true>({operands}, (int)valid_items);"]
    else:
        sort.append(f"  algo.Select<false>({operands}, {tile});")
    prologue = [] if spec.bitonic else [
        f"  scratch += cuda_coop::group_instance<{w}>(cuda_coop::linear_rank<{bx}, {by}, {bz}>()) * stride;"]
    return _Parts(algo, ("cuda_coop/warp/warp_topk.cuh", "cuda_coop/util_group.cuh"), _longs("k", "valid_items"),
                  sort, prologue, scratch=not spec.bitonic)


def _longs(*names: str) -> list[CParam]:
    return [CParam(Abi.I64, "long long", name) for name in names]


def emit_rank(spec: RankSpec) -> Provider:
    """BlockRadixRank over the bit-ordered keys (signed keys with the sign bit inverted), one digit."""
    bx, by, bz = spec.block
    t, k = c_type(spec.key_dtype), spec.items_per_thread
    unsigned = _UNSIGNED[itemsize(spec.key_dtype)]
    signed = str(spec.key_dtype.startswith("int")).lower()
    algo = (f"cub::BlockRadixRank<{bx}, {spec.radix_bits}, {str(spec.descending).lower()}, true, "
            f"cub::BLOCK_SCAN_WARP_SCANS, cudaSharedMemBankSizeFourByte, {by}, {bz}>")
    lines = [
        f"  using Algo = {algo};",
        "  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));",
        f"  {unsigned} bits[{k}];",
        f"  cuda_coop::ordered_bits<{unsigned}, {signed}>(keys, bits);",
        f"  int (&ranks)[{k}] = *reinterpret_cast<int (*)[{k}]>(output);",
    ]
    extractor = f"cub::BFEDigitExtractor<{unsigned}>({spec.begin_bit}, {spec.radix_bits})"
    params = [CParam(Abi.PTR, f"const {t}*", "keys"), CParam(Abi.PTR, "int*", "output")]
    if spec.digit_prefix:
        # The documented exclusive_digit_prefix (docs: operations/radix_sort, "Radix rank") holds in slot i of member t
        # the count of keys whose digit precedes digit t*E + i in the ranking order, E = ceil(2**bits / T). CUB's
        # overload fills BINS_TRACKED_PER_THREAD = max(1, ceil(2**bits / T)) = E slots per thread, slot i of linear
        # thread t being bin t*E + i; its linear thread is the row-major rank, i.e. our member rank. Descending ranks
        # store digit d's counter at the mirrored place, and CUB reads bin t*E + i from that mirrored place too, so the
        # slot still describes digit t*E + i and counts the keys with larger digits. The layouts therefore coincide and
        # the payload is passed as CUB's array unchanged. Slots of bins >= 2**bits are not written (unspecified).
        e = spec.prefix_extent
        lines += [f"  static_assert(Algo::BINS_TRACKED_PER_THREAD == {e}, \"digit prefix extent\");",
                  f"  int (&prefix)[{e}] = *reinterpret_cast<int (*)[{e}]>(digit_prefix);",
                  f"  algo.RankKeys(bits, ranks, {extractor}, prefix);"]
        params.append(CParam(Abi.PTR, "int*", "digit_prefix"))
    else:
        lines.append(f"  algo.RankKeys(bits, ranks, {extractor});")
    if spec.barrier:
        lines.append(reuse_barrier(None))
    params += SCRATCH_PARAMS
    body = f'extern "C" __device__ void @SYM@({c_signature(params)}) ' + "{\n" + "\n".join(lines) + "\n}\n"
    headers = ("cub/block/block_radix_rank.cuh", "cub/block/radix_rank_sort_operations.cuh", "cuda_coop/util_radix.cuh")
    return Provider.make("radix_rank", headers, body, f"typename {algo}::TempStorage", params)


def emit(spec: SortSpec) -> Provider:
    t, k = c_type(spec.key_dtype), spec.items_per_thread
    pairs = spec.value_dtype is not None
    v = c_type(spec.value_dtype) if spec.value_dtype is not None else "cub::NullType"
    build = {"merge_sort": _merge, "radix_sort": _radix, "topk": _warp_topk}[spec.op]
    parts = build(spec, t, v, "out, out_values" if pairs else "out")
    # CUB sorts in place; the results are fresh payloads and the inputs stay unchanged.
    copies = [f"  {t} (&out)[{k}] = *reinterpret_cast<{t} (*)[{k}]>(output);", "  cuda_coop::copy_items(out, keys);"]
    inputs = [CParam(Abi.PTR, f"const {t}*", "keys")]
    outputs = [CParam(Abi.PTR, f"{t}*", "output")]
    if pairs:
        copies += [f"  {v} (&out_values)[{k}] = *reinterpret_cast<{v} (*)[{k}]>(output_values);",
                   "  cuda_coop::copy_items(out_values, values);"]
        inputs.append(CParam(Abi.PTR, f"const {v}*", "values"))
        outputs.append(CParam(Abi.PTR, f"{v}*", "output_values"))
    construct = (["  Algo algo(*reinterpret_cast<typename Algo::TempStorage*>(scratch));"] if parts.scratch
                 else ["  typename Algo::TempStorage storage;", "  Algo algo(storage);"])
    lines = [f"  using Algo = {parts.algo};", *parts.prologue, *construct, *copies, *parts.sort]
    if spec.barrier:
        rank = f"cuda_coop::linear_rank<{spec.block[0]}, {spec.block[1]}, {spec.block[2]}>()"
        lines.append(reuse_barrier(None if spec.group.kind == BLOCK else spec.group.size, rank))
    params = [*inputs, *outputs, *parts.params, *SCRATCH_PARAMS]
    body = parts.decl + f'extern "C" __device__ void @SYM@({c_signature(params)}) {{\n' + "\n".join(lines) + "\n}\n"
    return Provider.make(spec.op, (*parts.headers, "cuda_coop/util_items.cuh"), body,
                         f"typename {parts.algo}::TempStorage" if parts.scratch else None, params)


def _scalar_entry(provider: Provider, result: str, params: list[CParam], body: str, arrays: int) -> Provider:
    """The qualified scalar forms (docs: qualified, "Payload forms"): the item function is kept under another name
    (inlined) and a C entry point of ``params`` (then the item function's controls, then the scratch) wraps it with
    one-item arrays; the controls are the item function's parameters between its ``arrays`` key and result arrays
    and the scratch (integers, keys, radix_rank's digit-prefix payload), forwarded in order (``@ARGS@`` in
    ``body``)."""
    inner = provider.template.replace('extern "C" __device__ void @SYM@(',
                                      "static __device__ __forceinline__ void @SYM@_items(")
    controls = [param for param in provider.params[arrays:] if param.abi not in (Abi.SCRATCH, Abi.STRIDE)]
    params = [*params, *controls, *SCRATCH_PARAMS]
    args = "".join(f", {c.name}" for c in controls)
    wrapper = (f'extern "C" __device__ {result} @SYM@({c_signature(params)}) {{\n'
               f"{body.replace('@ARGS@', args)}}}\n")
    return Provider.make(provider.family, provider.headers, inner + wrapper, provider.scratch_template, params)


def one_key(provider: Provider, key_dtype: str, result_dtype: str) -> Provider:
    """A radix sort or rank of one key per thread, passed by value, its result returned."""
    key_t, result_t = c_type(key_dtype), c_type(result_dtype)
    return _scalar_entry(
        provider, result_t, [CParam(Abi.VALUE, key_t, "key")],
        f"  const {key_t} keys[1] = {{key}};\n  {result_t} out[1];\n"
        "  @SYM@_items(keys, out@ARGS@, scratch, stride);\n  return out[0];\n", arrays=2)


def one_pair(provider: Provider, key_dtype: str, value_dtype: str) -> Provider:
    """``radix_sort_pairs`` of one key and one value per thread, passed by value; the thread's sorted key and
    value are written through two pointers (the backend returns them as a tuple)."""
    key_t, value_t = c_type(key_dtype), c_type(value_dtype)
    params = [CParam(Abi.VALUE, key_t, "key"), CParam(Abi.VALUE, value_t, "value", value_dtype),
              CParam(Abi.OUT, f"{key_t}*", "key_out", key_dtype),
              CParam(Abi.OUT, f"{value_t}*", "value_out", value_dtype)]
    return _scalar_entry(
        provider, "void", params,
        f"  const {key_t} keys[1] = {{key}};\n  const {value_t} values[1] = {{value}};\n"
        "  @SYM@_items(keys, values, key_out, value_out@ARGS@, scratch, stride);\n", arrays=4)
