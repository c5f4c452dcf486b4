"""Attribution: the prefix-cached layer IG engine, its targets and quadrature rules, and the other methods."""
