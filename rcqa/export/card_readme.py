"""An exported model's README.md, written from its card (rcqa_card.json): the base model, the data, the recipe and how
it really ran, the warm start, the checkpoint chosen, its threshold and its scores."""
from __future__ import annotations


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


def readme_text(card: dict) -> str:
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
