"""On the GPU machine (no spaCy: words split by the stand-in in the bundle's stubs/): score one kept model on the run's
held-out questions, or pick the best kept model by held-out best_f1, export it as fp16 and draw the hand-written
set's curve for every kept model beside the third stage.

    python choose.py score MODEL_DIR HELD_OUT.json OUT.json
    python choose.py pick RUN_DIR OUT_DIR SCORES.json...
"""
import json
import sys
import time
from pathlib import Path

from rcqa.data import load_examples
from rcqa.evaluate import evaluate_v2
from rcqa.export.abstention import abstention_tradeoff
from rcqa.export.checkpoints import export, kept_models, null_predictions
from rcqa.model import load_model
from rcqa.negatives import negative_kind


def score(model_dir: str, held_out_file: str, out: str) -> None:
    started = time.perf_counter()
    held_out = load_examples(held_out_file)
    predictions = null_predictions(load_model(model_dir), held_out)
    metrics = evaluate_v2(held_out, lambda e: predictions[e.id], None, group=lambda e: negative_kind(e.id))
    Path(out).write_text(json.dumps({"model": model_dir, "seconds": time.perf_counter() - started, **metrics}))


def pick(run_dir: str, out_dir: str, score_files: list[str]) -> None:
    scores = {Path(s["model"]).name: s for s in (json.loads(Path(f).read_text()) for f in score_files)}
    kept = [p.name for p in kept_models(run_dir)]
    scored = [name for name in kept if name in scores]  # a model whose scoring ran out of time is not chosen
    chosen = max(scored, key=lambda name: (scores[name]["best_f1"], -kept.index(name)))  # the earlier of a tie
    export(run_dir, Path(out_dir) / "model", chosen)
    models = {"third stage": load_model("rcqa/default_squad2_model"),
              **{f"fourth stage/{name}": load_model(str(Path(run_dir) / name)) for name in kept}}
    curve = abstention_tradeoff(models, load_examples("tests/data/hard_unanswerable.json"),
                                ["antonym", "entity_swap"], 85.0)
    Path(out_dir, "chosen.json").write_text(json.dumps({"chosen": chosen, "held_out": scores, "tradeoff": curve},
                                                       indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "score":
        score(*sys.argv[2:5])
    else:
        pick(sys.argv[2], sys.argv[3], sys.argv[4:])
