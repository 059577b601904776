"""Layer 1: public markers. Backend-free signatures, docs and kernel-only guards."""
