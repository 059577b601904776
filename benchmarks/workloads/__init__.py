"""Real workloads written with cuda.coop, measured against the libraries serving stacks use (docs: "Real kernels")."""
