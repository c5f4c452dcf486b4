"""What each layer already knows: the answer read out of every layer's hidden states (readout), by the model's own
QA head and by linear probes trained per layer with the model frozen (probes); and what each layer's words do:
the answer with its top-k, random or bottom-k words knocked out, or the block skipped (interventions)."""
from rcqa.lens.probes import (
    Probes,
    ProbeSettings,
    ProbesUnavailable,
    find_probes,
    train_probes,
)
from rcqa.lens.readout import (
    READERS,
    AnswerLens,
    LayerReading,
    answer_lens,
    layer_scores,
    lens_row,
    read_layers,
)

__all__ = ["READERS", "AnswerLens", "LayerReading", "ProbeSettings", "Probes", "ProbesUnavailable", "answer_lens",
           "find_probes", "layer_scores", "lens_row", "read_layers", "train_probes"]
