"""What each layer attends to: the paper's answer / supporting / query categories among its top-k
passage words, quantifier questions, and a plain-words reading of the phases.

categories: which passage words are the answer, its supporting words, the query's (and a contrast's foil), and
their names; shares: per layer, each category's share of the top-k words and of the attribution (RoleNumbers);
readings: the phases in plain words; result: RoleShares, role_shares and ROLES, the registry's entry."""
