"""What each layer already knows: the answer read out of every layer's hidden states (readout), by the model's own
QA head and by linear probes trained per layer with the model frozen (probes); and what each layer's words do:
the answer with its top-k, random or bottom-k words knocked out, or the block skipped (interventions).

`rcqa.lens` is both this package and the Python API's lens on plain strings: calling the package,
`rcqa.lens(model_or_name, passage, question)`, returns answer_lens of that model and example. (A function named like
the package could not be found beside it: importing the package rebinds the name `rcqa.lens` to the package.)"""
import sys
from collections.abc import Sequence
from types import ModuleType

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
from rcqa.model import QAModel, as_model
from rcqa.types import Example


class _CallableLens(ModuleType):
    def __call__(self, model_or_name: str | QAModel, passage: str, question: str, *, gold: str | Sequence[str] = (),
                 device: str | None = None) -> AnswerLens:
        """What each layer would answer: read by the model's QA head, and by its trained probes if it has any."""
        return answer_lens(as_model(model_or_name, device), Example.of(passage, question, gold))


sys.modules[__name__].__class__ = _CallableLens

__all__ = ["READERS", "AnswerLens", "LayerReading", "ProbeSettings", "Probes", "ProbesUnavailable", "answer_lens",
           "find_probes", "layer_scores", "lens_row", "read_layers", "train_probes"]
