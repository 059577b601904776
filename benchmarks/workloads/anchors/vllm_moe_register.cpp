// cuda-coop's own registration file (not part of vLLM): registers the host function
// moe_align_block_size of vLLM 0.33.0's csrc/moe/moe_align_sum_kernels.cu (compiled
// unchanged into the same library by anchor_build.py) as
// torch.ops.coop_vllm.moe_align_block_size, with the
// schema vLLM 0.33.0 gives it in csrc/moe/torch_bindings.cpp
// (torch.ops._moe_C.moe_align_block_size), through the same stable-ABI macros.
//
// Loaded with torch.ops.load_library(".../libvllm_moe_align.so"): no Python module init.

#include <cstdint>
#include <optional>

#include <torch/csrc/stable/library.h>
#include <torch/csrc/stable/tensor.h>

// Declared as in vLLM 0.33.0's csrc/moe/moe_ops.h; defined in moe_align_sum_kernels.cu.
void moe_align_block_size(torch::stable::Tensor topk_ids, int64_t num_experts,
                          int64_t block_size,
                          torch::stable::Tensor sorted_token_ids,
                          torch::stable::Tensor experts_ids,
                          torch::stable::Tensor num_tokens_post_pad,
                          std::optional<torch::stable::Tensor> maybe_expert_map,
                          std::optional<torch::stable::Tensor> scatter_idx);

STABLE_TORCH_LIBRARY(coop_vllm, m) {
  // The schema string of vLLM 0.33.0's csrc/moe/torch_bindings.cpp, verbatim.
  m.def(
      "moe_align_block_size(Tensor topk_ids, int num_experts,"
      "                     int block_size, Tensor! sorted_token_ids,"
      "                     Tensor! experts_ids,"
      "                     Tensor! num_tokens_post_pad,"
      "                     Tensor? maybe_expert_map,"
      "                     Tensor(a!)? scatter_idx=None) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL(coop_vllm, CUDA, m) {
  m.impl("moe_align_block_size", TORCH_BOX(&moe_align_block_size));
}
