"""Where a contrast is won: the margin between the explained span and its foil at every layer, as the answer lens
reads it (the model's own QA head applied to the layer's states, each span in its own window).

The margin is start + end logit of the span less the foil's, so at the last layer it is the contrast's F,
log p(span) − log p(foil) under the softmax over every window's spans."""
from __future__ import annotations

import numpy as np
import torch

from rcqa.analysis.roles.categories import boundary_contrast
from rcqa.attribution.window import window_inputs
from rcqa.attribution.stack import LayerStack
from rcqa.model import QAModel
from rcqa.qa import char_span_to_tokens, encode
from rcqa.types import Attribution


def contrast_margins(qa_model: QAModel, result: Attribution, target: int = 0) -> np.ndarray:
    """Per layer (embeddings first), the head's margin of the explained span over the contrast's foil; ValueError
    for a target that is no contrast."""
    chosen = result.targets[target]
    foil = chosen.foil
    if foil is None:
        raise ValueError(f"target {chosen.name!r} is no contrast: it has no foil")
    windows = encode(qa_model, result.example.question, result.example.passage)
    # the span's tokens in its own window: a whole passage's result numbers its tokens over the whole passage
    place = char_span_to_tokens(windows, *result.explained_span(target), prefer=result.window)
    assert place is not None  # the explained span was read from one of these windows
    _, start_token, end_token = place
    read = {window: _head_logits(qa_model, window_inputs(windows, window)) for window in {result.window,
                                                                                           foil.window}}
    (start, end), (foil_start, foil_end) = read[result.window], read[foil.window]
    margin = (start[:, start_token] + end[:, end_token]
              - foil_start[:, foil.start_token] - foil_end[:, foil.end_token])
    return margin.double().numpy()


def contrast_summary(qa_model: QAModel, result: Attribution, target: int = 0) -> dict:
    """What `explain --contrast` adds to its JSON: the foil, whether it overlaps the explained span (a boundary
    contrast, whose words in both spans are the analyses' "shared" category), the explained window, the contrast's
    completeness per layer, and the lens's margin per layer with its reading."""
    margins = contrast_margins(qa_model, result, target)
    chosen = result.targets[target]
    assert chosen.foil is not None  # contrast_margins refused a target without a foil
    return {"foil": chosen.foil.to_dict(chosen.window), "boundary": boundary_contrast(result, target),
            "explained_window": result.window,
            "completeness": [c.relative_error for c in result.completeness if c.target == chosen.name],
            "lens_margin": margins.round(6).tolist(), "lens_reading": margin_reading(result.layers, margins)}


def _head_logits(qa_model: QAModel, inputs: dict[str, torch.Tensor]) -> tuple[torch.Tensor, torch.Tensor]:
    """(layers × tokens) start and end logits of the QA head on every layer's states of one window."""
    stack = LayerStack(qa_model.model, {k: v.to(qa_model.device) for k, v in inputs.items()})
    with torch.no_grad():
        start, end = stack.run_from(stack.num_layers, torch.cat(stack.hidden))
    return start.float().cpu(), end.float().cpu()


def margin_reading(layers: list[str], margins: np.ndarray) -> str:
    """In words: at which layer the span first beats the foil on the lens, whether it stays ahead, and where the
    margin grows most."""
    ahead = margins > 0
    last = f"{margins[-1]:+.2f} at the last layer"
    gains = np.diff(margins)
    grows = (f"; the margin grows most at {layers[int(gains.argmax()) + 1]} ({gains.max():+.2f})"
             if len(gains) and gains.max() > 0 else "")
    if not ahead.any():
        return f"On the lens the foil leads the answer at every layer (margin {last}){grows}."
    first = int(ahead.argmax())
    stays = next((layer for layer in range(len(margins)) if ahead[layer:].all()), None)
    said = f"On the lens the answer first beats the foil at {layers[first]} (margin {margins[first]:+.2f})"
    if stays == first:
        said += f" and stays ahead from there (margin {last})"
    elif stays is None:
        said += f", but the foil leads again at the last layer (margin {last})"
    else:
        said += f", falls behind again, and leads for good from {layers[stays]} (margin {last})"
    return said + grows + "."
