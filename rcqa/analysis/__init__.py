"""Per-example analyses of an Attribution, as pure functions: words, roles, similarity, projections."""
