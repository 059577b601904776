"""Layer 2: backend-free semantics and planning. Every user error is raised here."""
