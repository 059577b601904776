"""Layer 1: public markers. Backend-free signatures, docs and kernel-only guards."""

# Every operation of the contract (docs: api/common), implemented or not.
OPERATIONS = (
    "load", "store", "exchange", "shuffle", "reduce", "sum", "reduce_batched", "scan", "exclusive_sum",
    "inclusive_sum", "exclusive_scan", "inclusive_scan", "merge_sort_keys", "merge_sort_pairs",
    "radix_sort_keys", "radix_sort_pairs", "radix_rank", "topk_min_keys", "topk_max_keys", "topk_min_pairs",
    "topk_max_pairs", "adjacent_difference", "discontinuity", "histogram", "run_length_decode",
    "run_length_decode_into", "argmax", "argmin",
)
