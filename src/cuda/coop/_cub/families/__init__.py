"""One C++ emitter per operation family: a spec in, a Provider out."""
