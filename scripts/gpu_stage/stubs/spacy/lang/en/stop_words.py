STOP_WORDS: frozenset[str] = frozenset()
