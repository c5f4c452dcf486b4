"""One explained example as one row of the run's Parquet store: the answer, its score, and per layer what the
dataset aggregates and the drill-down read. Each registered analysis fills its own columns (its result's row()), so a dataset
average is always an average of values a user can open one by one in Explore."""
from __future__ import annotations

import re

import numpy as np
import pyarrow as pa

from rcqa.analysis.pos import pos_group
from rcqa.analysis.registered import ALWAYS, ANALYSES, OPTIONAL
from rcqa.analysis.registry import ColumnKind, Inputs
from rcqa.analysis.roles.categories import CATEGORIES, category_masks
from rcqa.analysis.words import passage_distribution, top_k
from rcqa.evaluate import score
from rcqa.text import NUMBER_TAG, is_quantifier_question
from rcqa.types import Aggregation, Attribution, Example

QUESTION_TYPES = ("what", "who", "when", "where", "which", "why", "how many", "how much", "how", "other")
_WH = {"what": "what", "who": "who", "whom": "who", "whose": "who", "when": "when", "where": "where",
       "which": "which", "why": "why", "how": "how"}

_NUMBER = pa.float64()
_PER_LAYER = pa.list_(_NUMBER)  # one value per layer (embeddings first); null where undefined
_MATRIX = pa.list_(pa.list_(_NUMBER))
_SHARES = pa.list_(pa.list_(pa.float32()))  # per layer, one share per sentence
# a sentence share's decimals (0.01 % of a layer): with the 1,000-question run's word shares summed by sentence standing
# in for its sentence shares, the sentence columns add 348 bytes a row as full float32 and 178 rounded so (zstd, as
# compact writes), 1.9 MB over all of SQuAD dev
SHARE_DECIMALS = 4


def _arrow(kind: ColumnKind) -> pa.DataType:
    """The Parquet type of a registered analysis' column (rcqa.analysis.registry.ColumnKind)."""
    if isinstance(kind, tuple):
        return pa.struct([(name, _NUMBER) for name in kind])
    return {"per_layer": _PER_LAYER, "matrix": _MATRIX, "json": pa.string()}[kind]


TOP_WORD = pa.struct([
    ("word", pa.string()), ("index", pa.int32()),  # index into passage_words
    ("weight", _NUMBER),  # the word's share of the layer's distribution
    *((category, pa.bool_()) for category in CATEGORIES),
    ("pos", pa.string()), ("is_number", pa.bool_()),
])
SCHEMA = pa.schema([
    ("id", pa.string()), ("title", pa.string()), ("question", pa.string()),
    # the example itself, so that Explore opens it where the data file is not (null in runs made before)
    ("passage", pa.string()), ("gold_starts", pa.list_(pa.int32())), ("is_impossible", pa.bool_()),
    ("question_type", pa.string()), ("is_quantifier", pa.bool_()),
    ("prediction", pa.string()), ("explained_span", pa.string()), ("gold_answers", pa.list_(pa.string())),
    ("em", _NUMBER), ("f1", _NUMBER), ("probability", _NUMBER), ("n_windows", pa.int32()), ("window", pa.int32()),
    # a model that may abstain: whether it did, and p(no answer); null where decoding did not allow "no answer"
    ("abstained", pa.bool_()), ("null_probability", _NUMBER),
    ("layers", pa.list_(pa.string())), ("passage_words", pa.list_(pa.string())),
    ("distribution", _MATRIX), ("top_k", pa.list_(pa.list_(TOP_WORD))),
    *((column, _arrow(kind)) for name in ALWAYS for column, kind in ANALYSES[name].columns.items()),
    ("completeness", _PER_LAYER), ("steps", pa.list_(pa.int32())), ("seconds", _NUMBER),
    # JSON of the analyses a run may add (rcqa.dataset.extras); null where the run did not add them
    ("faithfulness", pa.string()), ("lens", pa.string()), ("interventions", pa.string()), ("sanity", pa.string()),
    ("heads", pa.string()),
    *((column, _arrow(kind)) for name in OPTIONAL for column, kind in ANALYSES[name].columns.items()),
    # JSON of a contrast run's foil, its words' share of the top-k and the lens margin (rcqa.dataset.extras)
    ("contrast", pa.string()),
    # the window's passage sentences (sentence_columns); null in rows written before them
    ("sentence_starts", pa.list_(pa.int32())), ("sentence_ends", pa.list_(pa.int32())),
    ("sentence_share", _SHARES), ("sentence_signed", _SHARES),
    ("sentence_explained", pa.int32()), ("sentence_predicted", pa.int32()), ("sentence_gold", pa.int32()),
])
SENTENCE_COLUMNS = ("sentence_starts", "sentence_ends", "sentence_share", "sentence_signed", "sentence_explained",
                    "sentence_predicted", "sentence_gold")


def question_type(question: str) -> str:
    """The question's first wh-word ('how many' and 'how much' apart from 'how'), else 'other'."""
    words = re.findall(r"[a-z]+", question.lower())
    for i, word in enumerate(words):
        if word in _WH:
            following = words[i + 1] if i + 1 < len(words) else ""
            return f"how {following}" if word == "how" and following in ("many", "much") else _WH[word]
    return "other"


def example_row(result: Attribution, aggregation: Aggregation, k: int, extras: dict[str, str | None] | None = None) -> dict:
    """The row of one explanation (see SCHEMA and the README's table), with the extra analyses' JSON if given. EM and
    F1 are null without gold answers."""
    example, answer = result.example, result.answer
    inputs = Inputs(result, aggregation, k)
    golds = [a.text for a in example.answers]
    em, f1 = score(answer.text, golds) if golds else (None, None)
    return {
        "id": example.id, "title": example.title, "question": example.question, **example_columns(example),
        "question_type": question_type(example.question), "is_quantifier": is_quantifier_question(example.question),
        "prediction": answer.text, "explained_span": result.targets[0].span, "gold_answers": golds,
        "em": em, "f1": f1, "probability": answer.best.probability if answer.best else None,
        "n_windows": answer.n_windows, "window": result.window,
        "abstained": answer.abstained if answer.no_answer else None,
        "null_probability": answer.no_answer.probability if answer.no_answer else None,
        "layers": result.layers, "passage_words": [w.text for w in result.passage_words()],
        "distribution": inputs.distribution.round(6).tolist(), "top_k": top_word_records(result, aggregation, k),
        **{column: value for name in ALWAYS for column, value in ANALYSES[name].run(inputs).row().items()},
        **_completeness(result), **sentence_columns(result, aggregation),
        "seconds": result.seconds, **(extras or {}),
    }


def sentence_columns(result: Attribution, aggregation: Aggregation) -> dict:
    """The explained target's scores summed by the window's passage sentences (result.granularity("sentence"), so a
    sentence scores the sum of its tokens'), per layer: `sentence_share` each sentence's |score| under the run's token
    score over the layer's total over the passage sentences (as `distribution` is over the words), `sentence_signed`
    each one's signed sum over the total of their |signed sums|, both to SHARE_DECIMALS; each sentence's passage
    characters; and which of them holds the explained span, the prediction and the first gold answer (null where
    none does: the span in another window, an abstention, no gold answer)."""
    magnitude, signed = (result.granularity("sentence", score) for score in (aggregation, "sum"))
    passage = magnitude.passage_units()
    units = [magnitude.units[i] for i in passage]
    signed_scores = signed.scores[:, passage].astype(np.float64)
    totals = np.abs(signed_scores).sum(axis=1, keepdims=True)
    best, golds = result.answer.best, result.example.answers

    def holding(char: int | None) -> int | None:
        return None if char is None else next((n for n, unit in enumerate(units)
                                               if unit.start_char <= char < unit.end_char), None)

    return {"sentence_starts": [unit.start_char for unit in units], "sentence_ends": [unit.end_char for unit in units],
            "sentence_share": _kept(magnitude.shares()),
            "sentence_signed": _kept(np.divide(signed_scores, totals, out=np.zeros_like(signed_scores),
                                               where=totals > 0)),
            "sentence_explained": None if magnitude.answer_unit is None else passage.index(magnitude.answer_unit),
            "sentence_predicted": holding(best.start_char if best and not result.answer.abstained else None),
            "sentence_gold": holding(golds[0].start_char if golds else None)}


def example_columns(example: Example) -> dict:
    """The columns beside id, title, question and gold_answers that give the example back (see run_examples)."""
    return {"passage": example.passage, "gold_starts": [a.start_char for a in example.answers],
            "is_impossible": example.is_impossible}


def top_word_records(result: Attribution, aggregation: Aggregation, k: int) -> list[list[dict]]:
    """Per layer, its top-k passage words best first, each with its weight, category flags and POS group."""
    distribution = passage_distribution(result, aggregation)
    words = result.passage_words()
    masks = category_masks(result)
    return [[{"word": words[i].text, "index": int(i), "weight": float(distribution[layer, i]),
              **{c: bool(masks[c][i]) for c in CATEGORIES},
              "pos": pos_group(words[i]), "is_number": words[i].tag == NUMBER_TAG}
             for i in row] for layer, row in enumerate(top_k(distribution, k))]


def _kept(shares: np.ndarray) -> list[list[float]]:
    return np.round(shares, SHARE_DECIMALS).astype(np.float32).tolist()


def _completeness(result: Attribution) -> dict:
    """Per layer, the first target's relative completeness error and the path points it took. The engine lists
    the checks layer by layer, each layer's targets in order."""
    checks = result.completeness[::len(result.targets)]
    return {"completeness": [c.relative_error for c in checks], "steps": [c.steps for c in checks]}
