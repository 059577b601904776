"""Layer 3: CUB code generation, NVRTC to LTO-IR, scratch discovery and the provider cache.

Compiler-free (no numba-cuda-mlir imports) but toolkit-aware. CUDA packages are
imported inside functions so that planning code stays importable without them.
"""
