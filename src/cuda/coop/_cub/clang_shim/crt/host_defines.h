// cuda-coop: vector_types.h includes this; its definitions come from cuda_coop_clang.h.
