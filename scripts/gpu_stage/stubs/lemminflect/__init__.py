"""Stand-in for lemminflect on the GPU machine: imported by rcqa.negatives, never called by a prepared run."""


def _absent(*args, **kwargs):
    raise RuntimeError("lemminflect is not on this machine")


getAllInflections = getInflection = getLemma = getAllLemmas = _absent
