"""Write reports/abstention/hand-written-antonyms.json: each antonym of the hand-written set, whether the training's
generator writes it (rcqa.negatives.reach: from its twin, the passage's word put back) and each model's null odds on
it beside the model's tuned threshold, so that docs/abstention.md can tell the misses of a kind the models were
trained on from those no generator writes; and, where the question has a twin (the passage's word put back), each
model's answer and null odds on the twin too: how far the swapped word moves the model towards "no answer".

    python scripts/hand_written_antonyms.py "second stage=runs/second-stage" "third stage=runs/third-stage" ...
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from rcqa.data import load_examples
from rcqa.export.checkpoints import null_predictions
from rcqa.model import load_model
from rcqa.negatives import negative_kind
from rcqa.negatives.reach import antonym_twins, written_by_antonym_generator
from rcqa.types import Example

ROOT = Path(__file__).resolve().parents[1]
HARD_SET = ROOT / "tests" / "data" / "hard_unanswerable.json"
OUT = ROOT / "reports" / "abstention" / "hand-written-antonyms.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("models", nargs="+", help="LABEL=MODEL, each a model whose card tunes a threshold")
    parser.add_argument("--out", default=str(OUT))
    args = parser.parse_args()
    antonyms = [e for e in load_examples(HARD_SET) if negative_kind(e.id) == "antonym"]
    models = {label: load_model(folder) for label, _, folder in (text.partition("=") for text in args.models)}
    all_twins = {e.id: antonym_twins(e) for e in antonyms}
    twins = {qid: found[0] for qid, found in all_twins.items() if found}  # the first, read by each model
    read = {label: null_predictions(qa_model, antonyms + list(twins.values())) for label, qa_model in models.items()}

    def readings(question: Example) -> dict:
        """Each model's null odds and best span on the question."""
        return {"null_odds": {label: read[label][question.id][1] for label in models},
                "answers": {label: read[label][question.id][0] for label in models}}

    report = {"file": HARD_SET.name, "thresholds": {label: m.null_threshold for label, m in models.items()},
              "questions": [{"id": e.id, "question": e.question,
                             "twins": [twin.question for twin in all_twins[e.id]],
                             "written_by_generator": written_by_antonym_generator(e), **readings(e),
                             **({"twin": {"question": twins[e.id].question, **readings(twins[e.id])}}
                                if e.id in twins else {})} for e in antonyms]}
    Path(args.out).write_text(json.dumps(report, indent=1) + "\n")


if __name__ == "__main__":
    main()
