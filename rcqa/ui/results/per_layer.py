"""What each layer of an explained example knows and does, each on a click and through the queue: the answer lens,
a contrast's margins, the knock-outs, and the map of one layer's token vectors."""
from __future__ import annotations

from rcqa.analysis.projection import projection_seconds
from rcqa.attribution.cost import Price
from rcqa.figures import Chart, projection_map
from rcqa.lens import AnswerLens
from rcqa.lens.cost import interventions_seconds, lens_seconds, margins_seconds
from rcqa.lens.interventions import Interventions
from rcqa.model import QAModel
from rcqa.types import Attribution
from rcqa.ui import worker
from rcqa.ui.results.answers import window_tokens
from rcqa.ui.results.requested import ask_button, queued
from rcqa.ui.show import report


KNOCKOUT_DRAWS = 5  # random draws per layer on the Explore page


def result_window_tokens(qa_model: QAModel, result: Attribution) -> int:
    """The tokens of a window of the result's example (window_tokens)."""
    return window_tokens(qa_model, result.example, result.answer)


def lens(qa_model: QAModel, result: Attribution, key: str) -> AnswerLens | None:
    """The answer lens of the result's example, once asked for: one forward pass, through the queue."""
    request = ("lens", key)
    if not ask_button(request, "Read the answer out of every layer",
                      "Runs the QA head (and any probes trained for this model) on every layer's output: one "
                      "forward pass."):
        return None
    price = Price(lens_seconds(qa_model, result.answer.n_windows, result_window_tokens(qa_model, result)))
    return queued(request, qa_model, worker.lens, result.example, label="Reading the answer out of every layer…",
                  estimate=price, shown=result.example, first_step="answering")


def contrast_margins(qa_model: QAModel, result: Attribution, key: str):
    """A contrast's lens margin per layer (a forward pass of one or two windows, through the queue); None for a
    result without a contrast."""
    if (foil := result.targets[0].foil) is None:
        return None
    windows = len({result.window, foil.window})
    price = Price(margins_seconds(qa_model, windows, result_window_tokens(qa_model, result)))
    return queued(("contrast", key), qa_model, worker.contrast_margins, result,
                  label="Reading the answer's margin over the foil at every layer…", estimate=price,
                  shown=result.example)


def knockouts(qa_model: QAModel, result: Attribution, request: tuple) -> Interventions | None:
    """The interventions of request ("knockouts", result key, k, baseline, aggregation), once asked for."""
    _, _, k, baseline, aggregation = request
    price = Price(interventions_seconds(qa_model, result_window_tokens(qa_model, result), KNOCKOUT_DRAWS, baseline))
    return queued(request, qa_model, worker.knockouts, result, k, KNOCKOUT_DRAWS, baseline, aggregation,
                  label="Knocking out each layer's words…", estimate=price, shown=result.example)


def projection_chart(qa_model: QAModel, key: str, layer: int, method: str, result: Attribution) -> Chart | None:
    """The map of one layer's token vectors, once asked for: t-SNE is slow on long inputs."""
    request = ("projection", key, layer, method)
    if not ask_button(request, "Map the token vectors", "Projects every token's vector at this layer to two "
                      "dimensions (t-SNE takes a while on long passages)."):
        return None
    if result.hidden_states is None:
        report(ValueError("this result holds no layer outputs (hidden states); explain it again to project them"))
        return None
    vectors = result.hidden_states[layer]
    projected = queued(request, qa_model, worker.projection, vectors, method, label="Projecting the token vectors…",
                       estimate=Price(projection_seconds(method, len(vectors))))
    return None if projected is None else projection_map(result, layer, projected)
