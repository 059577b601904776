"""One conformance suite of common-API cases, written once and run against every backend (numba-cuda-mlir, CuTe DSL).

A package (unlike tests/gpu and tests/compile) so that its module names do not clash with theirs."""
