"""Analyses a run may add to every example beside the layer-wise IG (`reproduce --faithfulness --lens
--interventions --sanity --heads`, and each optional registered analysis, rcqa.analysis.registered: `--agreement`). Each
fills its column of the row (JSON) with the numbers its own CLI verb reports, trimmed to what the dataset aggregates
read."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING

from rcqa.analysis.registered import ANALYSES, OPTIONAL

if TYPE_CHECKING:  # the analyses load torch models; the aggregates that read EXTRAS do not need them
    from rcqa.model import QAModel
    from rcqa.types import Aggregation, Attribution, Example

# what the column holds, for --help and the README
EXTRAS = {
    "faithfulness": "the attribution methods' deletion tests against random (see `python -m rcqa faithfulness`)",
    "lens": "the answer read out of every layer by the QA head and the probes (see `python -m rcqa lens`)",
    "interventions": "each layer's top-k, bottom-k and random words knocked out, and each block skipped "
                     "(see `python -m rcqa intervene`)",
    "sanity": "Adebayo et al.'s sanity checks of every compared method, the model randomised part by part from the "
              "top (see `python -m rcqa faithfulness --sanity`; about 2 × (blocks + 2) + 1 explanations by every "
              "method per example)",
    "heads": "every attention head knocked out, and its AttnLRP relevance, attention attribution and gradient "
             "importance, in the answer's window (see `python -m rcqa heads`; about 10 passes of the window per "
             "layer)",
    **{name: f"{ANALYSES[name].summary} (see `python -m rcqa analyze {name}`)" for name in OPTIONAL},
}
# the analyses that read the explanation's window, which a whole-passage run (--windows all) has not one of
ONE_WINDOW = ("faithfulness", "interventions", "sanity", *(name for name in OPTIONAL if ANALYSES[name].companion))


def _faithfulness(qa_model: QAModel, example: Example, result: Attribution, job) -> str:
    from rcqa.attribution.methods.layer_embeddings import ranked_scores
    from rcqa.dataset.faithfulness import record
    from rcqa.faithfulness.compare import Protocol
    from rcqa.faithfulness.report import example_faithfulness

    # the method at the embeddings is the explanation's layer 0, for the same window and target. With several
    # targets IG's adaptive rule refines its panels for all of them at once, so they are taken only from a one-target run.
    known = ({result.settings.method: ranked_scores(result.scores[0, :, 0])} if len(result.targets) == 1 else {})
    protocol = Protocol(draws=job.draws, spare_answer=job.spare_answer, naopc_beam=job.naopc_beam,
                        operator=job.operator)
    return record(example_faithfulness(qa_model, example, protocol=protocol, settings=job.settings, known=known))


def _lens(qa_model: QAModel, example: Example, result: Attribution, job) -> str:
    from rcqa.lens import answer_lens, lens_row

    return json.dumps(lens_row(answer_lens(qa_model, example)))


def _interventions(qa_model: QAModel, example: Example, result: Attribution, job) -> str:
    from rcqa.lens.interventions import intervene, intervention_row

    return json.dumps(intervention_row(intervene(qa_model, result, k=job.top_k, draws=job.draws,
                                                 aggregation=job.aggregation, outside_span=job.spare_answer)))


def _sanity(qa_model: QAModel, example: Example, result: Attribution, job) -> str:
    from rcqa.dataset.sanity import record
    from rcqa.faithfulness.sanity import sanity_checks

    # the run's settings name the explanation's target and span, so every method explains what the row explains
    return record(sanity_checks(qa_model, example, settings=job.settings))


def _heads(qa_model: QAModel, example: Example, result: Attribution, job) -> str:
    from rcqa.attention_heads import score_heads
    from rcqa.dataset.heads import record

    return record(score_heads(qa_model, example))


COMPUTE: dict[str, Callable[..., str]] = {"faithfulness": _faithfulness, "lens": _lens,
                                          "interventions": _interventions, "sanity": _sanity, "heads": _heads}


def extra_cells(qa_model: QAModel, example: Example, result: Attribution, job) -> dict[str, str | None]:
    """The row's extra columns: the chosen analyses' JSON, null for the others; and a contrast run's contrast."""
    return {**{name: COMPUTE[name](qa_model, example, result, job) if name in job.extras else None
               for name in COMPUTE},
            **{column: value for name in OPTIONAL for column, value in _registered(name, qa_model, result, job).items()},
            "contrast": contrast_cell(qa_model, result, job.aggregation, job.top_k) if job.settings.contrast else None}


def _registered(name: str, qa_model: QAModel, result: Attribution, job) -> dict:
    """A registered optional analysis' cells: its result's row if the run asked for it, else nulls."""
    from rcqa.analysis_run import run_analysis

    if name not in job.extras:
        return dict.fromkeys(ANALYSES[name].columns)
    return run_analysis(name, qa_model, result, job.settings, job.aggregation, job.top_k).row()


def contrast_cell(qa_model: QAModel, result: Attribution, aggregation: Aggregation, k: int) -> str:
    """The contrast (the explanation's first target) in a row: its foil, the shares (%) of each layer's top-k that
    are the foil's words and that are other numbers (neither the span's nor the foil's; the row's category columns
    hold the answer's, supporting and query words'), for a foil overlapping the span the share of the words of both
    (then the foil's and the answer's columns hold the words of one span only), and the lens margin per layer."""
    from rcqa.analysis.registry import json_list
    from rcqa.analysis.roles.shares import category_shares, other_number_share
    from rcqa.analysis.words import passage_distribution
    from rcqa.lens.contrast import contrast_margins

    distribution = passage_distribution(result, aggregation)
    shares, others = category_shares(result, distribution, k), other_number_share(result, distribution, k)
    foil, shared = shares.get("foil"), shares.get("shared")
    # both None for the foil "no answer", which has no words; shared only for a foil overlapping the span
    chosen = result.targets[0]
    assert chosen.foil is not None  # asked only of a run with a contrast, whose first target is it
    return json.dumps({"foil": chosen.foil.to_dict(chosen.window),
                       "category_foil": None if foil is None else json_list(foil, 2),
                       **({} if shared is None else {"category_shared": json_list(shared, 2)}),
                       "category_other_numbers": None if others is None else json_list(others, 2),
                       "lens_margin": contrast_margins(qa_model, result).round(4).tolist()})
