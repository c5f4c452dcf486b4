"""Verbs on a model: evaluate, probes, train, negatives (its training data), export."""
from __future__ import annotations

import argparse
import json

from rcqa.cli.options import CliError, add_model, add_null, add_print_json


def add_evaluate(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("evaluate", help="SQuAD v1.1 exact match and F1; on a file with unanswerable "
                                                   "questions, the official SQuAD v2.0 metrics")
    command.add_argument("--data", help="SQuAD-format file (default: SQuAD v1.1 dev)")
    command.add_argument("--limit", type=int, help="first N questions only")
    command.add_argument("--against", metavar="MODEL",
                         help="on a file with unanswerable questions, also read each question with MODEL (each at "
                              "its own threshold) and compare F1 question by question: the mean difference with its "
                              "paired 95 %% interval (JSON: against; against.HasAns and against.NoAns: the "
                              "answerable and the unanswerable questions' F1 compared alike; against.by_kind: each "
                              "kind of unanswerable question's NoAns F1)")
    add_null(command)
    add_model(command)
    add_print_json(command)
    command.set_defaults(handler=_evaluate)


def _evaluate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from rcqa.data import load_examples
    from rcqa.evaluate import evaluate
    from rcqa.model import load_model
    from rcqa.qa import answer
    from rcqa.resources import squad_file

    examples = load_examples(args.data or squad_file("dev"))[: args.limit]
    qa_model = load_model(args.model, args.device)
    progress = lambda items: tqdm(items, desc="evaluating", disable=args.json, mininterval=5)  # noqa: E731
    if any(e.is_impossible for e in examples):
        return _evaluate_v2(args, qa_model, examples, progress)
    if args.against:
        raise CliError("--against compares models on a file with unanswerable questions (SQuAD v2.0 style)")
    metrics = evaluate(examples, lambda e: answer(qa_model, e.passage, e.question, n_best=1,
                                                  allow_null=args.allow_null).text, progress=progress)
    if args.json:
        print(json.dumps(metrics))
    else:
        print(f"exact match {metrics['exact_match']:.2f}  F1 {metrics['f1']:.2f}  on {metrics['n']} questions")
    return 0


def _evaluate_v2(args: argparse.Namespace, qa_model, examples, progress) -> int:
    """The official v2.0 metrics: the best span and its null odds are always read; the model abstains at its
    threshold where null is allowed (its card, or --allow-null), never with --no-null."""
    from rcqa.evaluate import evaluate_v2
    from rcqa.negatives import negative_kind
    from rcqa.qa import best_span_and_null_odds

    def threshold(model) -> float | None:
        allowed = model.trained_with_unanswerable if args.allow_null is None else args.allow_null
        return model.null_threshold if allowed else None

    own = threshold(qa_model)
    predictions = {e.id: best_span_and_null_odds(qa_model, e.passage, e.question) for e in progress(examples)}
    metrics = evaluate_v2(examples, lambda e: predictions[e.id], own, group=lambda e: negative_kind(e.id))
    metrics["threshold"] = own
    if args.against:
        metrics["against"] = _against(args, examples, predictions, own, threshold, progress)
    if args.json:
        print(json.dumps(metrics))
    else:
        print(f"SQuAD v2.0 on {metrics['total']} questions: exact {metrics['exact']:.2f}  F1 {metrics['f1']:.2f}  "
              f"(HasAns F1 {metrics.get('HasAns_f1', float('nan')):.2f}, NoAns F1 "
              f"{metrics.get('NoAns_f1', float('nan')):.2f}); best F1 {metrics['best_f1']:.2f} at threshold "
              f"{metrics['best_f1_thresh']:.3f}")
        for kind, scores in metrics.get("by_kind", {}).items():  # NoAns exact: the share it abstained on
            print(f"  {kind}: abstains on {scores['NoAns_exact']:.0f} % of {scores['NoAns_total']} unanswerable")
        if args.against:
            against = metrics["against"]
            print(paired_sentence(args.model, against))
            parts = [(side, against[side], f"{side} F1", f"{side}_f1") for side in ("HasAns", "NoAns")
                     if side in against]
            parts += [(kind, compared, "NoAns F1", "NoAns_f1") for kind, compared in against.get("by_kind", {}).items()]
            for name, compared, metric, key in parts:
                print(f"  {name}: " + paired_sentence(args.model, {**compared, "model": args.against}, metric, key))
    return 0


def _against(args: argparse.Namespace, examples, predictions: dict, own_threshold: float | None, threshold,
             progress) -> dict:
    """The --against comparison: the other model read on the same questions, at its own threshold."""
    from rcqa.evaluate import paired_v2_f1
    from rcqa.model import load_model
    from rcqa.negatives import negative_kind
    from rcqa.qa import best_span_and_null_odds

    other = load_model(args.against, args.device)
    read = {e.id: best_span_and_null_odds(other, e.passage, e.question) for e in progress(examples)}
    return {"model": args.against, "threshold": threshold(other),
            **paired_v2_f1(examples, predictions, own_threshold, read, threshold(other),
                           group=lambda e: negative_kind(e.id))}


def paired_sentence(model: str, against: dict, metric: str = "F1", key: str = "f1") -> str:
    """The comparison's sentence, read from its numbers: higher or lower only where the interval excludes 0."""
    difference = against["difference"]
    numbers = (f"{metric} {against[key]:.2f} against {against[f'against_{key}']:.2f}: {model} − {against['model']} "
               f"{difference['mean']:+.2f} points, 95 % interval [{difference['low']:+.2f}, {difference['high']:+.2f}] "
               f"over {difference['n']:,} questions")
    if not against["told_apart"]:
        return f"{numbers}; not told apart."
    return f"{numbers}; {model} scores {'higher' if difference['mean'] > 0 else 'lower'}."


def add_probes(commands: argparse._SubParsersAction) -> None:
    from rcqa.lens import ProbeSettings

    command = commands.add_parser("probes", help="train the answer lens's per-layer probes on SQuAD v1.1 train (model "
                                                 "frozen), score every layer on dev, save them beside the model")
    command.add_argument("--examples", type=int, default=ProbeSettings.examples,
                         help="training questions, drawn with the seed")
    command.add_argument("--seed", type=int, default=ProbeSettings.seed)
    command.add_argument("--dev", type=int, default=500, help="score on the first N dev questions")
    command.add_argument("--data", help="SQuAD-format training file (default: SQuAD v1.1 train)")
    command.add_argument("--dev-data", help="SQuAD-format file to score on (default: SQuAD v1.1 dev)")
    command.add_argument("--out", help="folder to write probes.safetensors and probes.json to (default: the embedded "
                                       "model's own folder for an embedded model, else the cache: "
                                       "~/.cache/rcqa/probes/<fingerprint>)")
    add_model(command)
    command.set_defaults(handler=_probes)


def _probes(args: argparse.Namespace) -> int:
    from dataclasses import replace
    from pathlib import Path

    from tqdm import tqdm

    from rcqa.data import load_examples
    from rcqa.lens import ProbeSettings, layer_scores, train_probes
    from rcqa.lens.probes import home
    from rcqa.model import load_model
    from rcqa.resources import squad_file
    from rcqa.export.card import refresh_probes_on_card

    qa_model = load_model(args.model, args.device)
    settings = ProbeSettings(examples=args.examples, seed=args.seed)
    probes = train_probes(qa_model, load_examples(args.data or squad_file("train")), settings,
                          progress=lambda items: tqdm(items, desc="reading training windows", mininterval=10))
    dev = load_examples(args.dev_data or squad_file("dev"))[: args.dev]
    scores = layer_scores(qa_model, dev, probes, progress=lambda items: tqdm(items, desc="scoring on dev",
                                                                             mininterval=10))
    command = (f"python -m rcqa probes --model {args.model} --examples {args.examples} --seed {args.seed} "
               f"--dev {args.dev}")
    probes = replace(probes, report={**probes.report, "command": command, "training_data": args.data or
                                     "SQuAD v1.1 train", "dev": {"data": args.dev_data or "SQuAD v1.1 dev",
                                                                 "first": args.dev, **scores}})
    path = probes.save(Path(args.out) if args.out else home(qa_model))
    if refresh_probes_on_card(path.parent):
        print(f"the model card in {path.parent} now quotes these probes")
    print(f"{'layer':>12}  head EM / F1    probe EM / F1   (first {scores['questions']} dev questions)")
    for layer, label in enumerate(probes.report["layers"]):
        print(f"{label:>12}  " + "   ".join(f"{scores[r]['exact_match'][layer]:6.2f} / {scores[r]['f1'][layer]:6.2f}"
                                          for r in ("head", "probe")))
    print(f"probes saved to {path}")
    return 0


def add_train(commands: argparse._SubParsersAction) -> None:
    from rcqa.train import RECIPES

    command = commands.add_parser("train", help="fine-tune the default QA model on SQuAD v1.1 train")
    command.add_argument("--recipe", choices=RECIPES, help="a named recipe: squad2 (the abstaining model: warm start "
                                                           "from the default model, a third unanswerable questions, "
                                                           "a quarter epoch), squad2-hard (its second stage, a fifth "
                                                           "of an epoch more from --base-model), squad2-lexicon (a "
                                                           "third stage from the embedded default-squad2, half the "
                                                           "negatives perturbations), squad2-lexicon-long (its mix, "
                                                           "two epochs more: a GPU's work); options given beside it "
                                                           "override it")
    command.add_argument("--output-dir", help="default: runs/default (the recipe's own with --recipe)")
    command.add_argument("--data", help="SQuAD-format training file (default: SQuAD v1.1 train)")
    command.add_argument("--base-model", help="encoder folder (default: packaged all-MiniLM-L6-v2; the default "
                                              "model with --recipe squad2, default-squad2 with squad2-lexicon)")
    for option, kind, text in (
            ("--max-len", int, "default 256"), ("--doc-stride", int, "default 128"), ("--batch-size", int, "default 32"),
            ("--learning-rate", float, "default 1e-4"), ("--epochs", float, "default 1.0"),
            ("--seed", int, "default 0"), ("--warmup-fraction", float, "default 0.1"),
            ("--first-step", int, "warm start: the step --base-model's weights reached in this recipe's batch order"),
            ("--negatives", float, "add SQuAD 2.0-style unanswerable questions built from the training questions, "
                                   "this share of all (a third: 0.333)"),
            ("--in-context", float, "share of the negatives that are in-context ones (default 0.5)"),
            ("--perturbed", float, "share of the negatives that are question perturbations (default 0; a third "
                                   "with --recipe squad2)"),
            ("--held-out-articles", int, "keep N whole articles out of training, written with their negatives "
                                         "as held_out-v2.json to choose the checkpoint on"),
            ("--keep-every", int, "also keep the model every N steps (step-N/)")):
        command.add_argument(option, type=kind, help=text)
    command.add_argument("--limit", type=int, help="first N questions only")
    command.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: $RCQA_DEVICE, else CUDA if present)")
    command.add_argument("--prepare-only", action="store_true",
                         help="build the negatives and the features into the output folder and stop before the first "
                              "step: the folder then trains on another machine (a GPU without spaCy) with the same "
                              "command, reading them back")
    command.set_defaults(handler=_train)


def _train(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from rcqa.data import load_examples
    from rcqa.resources import EMBEDDED_MODEL_DIRS, encoder_path, squad_file
    from rcqa.train import NEEDS_BASE, RECIPE_BASES, RECIPES, TrainConfig, train

    if args.recipe in NEEDS_BASE and not args.base_model:
        raise CliError(f"--recipe {args.recipe} continues {NEEDS_BASE[args.recipe]}: give it with --base-model.")
    recipe = RECIPES[args.recipe] if args.recipe else {}
    given = {f.name: getattr(args, f.name) for f in fields(TrainConfig)  # --recipe is recorded by its name
             if getattr(args, f.name, None) is not None}
    config = TrainConfig(**{**recipe, **given})
    examples = load_examples(args.data or squad_file("train"))
    base = args.base_model or (EMBEDDED_MODEL_DIRS[RECIPE_BASES[args.recipe]] if args.recipe in RECIPE_BASES
                               else encoder_path())
    done = train(config, examples, base, args.device, args.prepare_only)
    print(f"features and held-out questions prepared in {done}" if args.prepare_only else f"model saved to {done}")
    return 0


def add_negatives(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("negatives", help="write a SQuAD v2.0-style file: a SQuAD v1.1 file's questions "
                                                    "and unanswerable ones built from them")
    command.add_argument("--data", help="SQuAD v1.1 file (default: SQuAD v1.1 dev)")
    command.add_argument("--out", required=True, help="where to write the v2.0-style file")
    command.add_argument("--share", type=float, default=1 / 3, help="unanswerable share of all (default a third)")
    command.add_argument("--in-context", type=float, default=0.5,
                         help="share of the negatives that are in-context ones (default 0.5)")
    command.add_argument("--perturbed", type=float, default=0.0,
                         help="share of the negatives that are question perturbations (antonym, entity swap, "
                              "negation, mutual exclusion, impossible condition, role swap, vague quantity; "
                              "default 0); with --in-context, at "
                              "most 1 in all, the rest other-paragraph ones")
    command.add_argument("--seed", type=int, default=0)
    command.set_defaults(handler=_negatives)


def _negatives(args: argparse.Namespace) -> int:
    from collections import Counter
    from pathlib import Path

    from rcqa.data import load_examples
    from rcqa.negatives import negative_kind, squad_v2_document, with_negatives
    from rcqa.resources import squad_file

    try:
        mixed = with_negatives(load_examples(args.data or squad_file("dev")), args.share, args.in_context, args.seed,
                               args.perturbed)
    except ValueError as refused:
        raise SystemExit(str(refused)) from None
    Path(args.out).write_text(json.dumps(squad_v2_document(mixed)))
    kinds = Counter(negative_kind(e.id) or "answerable" for e in mixed)
    print(json.dumps({"questions": len(mixed), **kinds}))
    return 0


def add_export(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("export", help="write a trained run as an embedded model folder with its card: "
                                                 "the checkpoint chosen, fp16 weights, dev scores")
    command.add_argument("run_dir")
    command.add_argument("--to", help="model folder (default: the embedded default model's, or default-squad2's for "
                                      "a run trained with unanswerable questions)")
    command.add_argument("--checkpoint", help="final, step-N, or best: the kept model with the best v2.0 F1 on the "
                                              "run's held-out articles (the default where the run has them)")
    command.add_argument("--max-len", type=int, default=384, help="window length it answers with")
    command.add_argument("--doc-stride", type=int, default=128)
    command.add_argument("--limit", type=int, help="evaluate on the first N questions of each file only")
    command.add_argument("--dev-v2", help="the v2-style dev file to measure an abstaining model on, as `python -m rcqa "
                                          "negatives` wrote it with the run's mix (default: built here with spaCy)")
    command.add_argument("--hard-set", help="a SQuAD v2.0 file of hard questions to score an abstaining model on too, "
                                            "each kind apart (tests/data/hard_unanswerable.json, the hand-written set)")
    command.set_defaults(handler=_export)


def _export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tqdm import tqdm

    from rcqa.export import abstention, card, checkpoints
    from rcqa.data import load_examples
    from rcqa.evaluate import evaluate
    from rcqa.model import load_model
    from rcqa.qa import answer
    from rcqa.resources import EMBEDDED_MODEL_DIRS, squad_file
    from rcqa.train import HELD_OUT_FILE

    run_dir = Path(args.run_dir)
    recipe = json.loads((run_dir / "train_config.json").read_text())
    abstains = bool(recipe.get("negatives"))
    held_out_file = run_dir / HELD_OUT_FILE
    checkpoint = args.checkpoint or ("best" if held_out_file.is_file() else "final")
    if checkpoint == "best" and not held_out_file.is_file():
        raise SystemExit(f"--checkpoint best needs the run's held-out questions, and {held_out_file} is missing")
    progress = lambda items: tqdm(items, desc="answering", mininterval=10)  # noqa: E731
    held_out = load_examples(held_out_file)[: args.limit] if held_out_file.is_file() else []
    chosen: dict = {}
    if checkpoint == "best":
        scores = checkpoints.held_out_scores(run_dir, held_out, progress)
        checkpoint = checkpoints.best_checkpoint(scores)
        chosen = {"checkpoint": {"chosen": checkpoint, "by": "held-out best_f1",
                                 "held_out_best_f1": {name: s["best_f1"] for name, s in scores.items()}}}
    target = Path(args.to or EMBEDDED_MODEL_DIRS["default-squad2" if abstains else "default"])
    window = {"max_len": args.max_len, "doc_stride": args.doc_stride, "max_query_len": 64}
    # load_model reads the window from the card, so a card is written before the scores exist
    placeholder = {"squad_v1.1_dev": {"exact_match": float("nan"), "f1": float("nan"), "n": 0}}
    card.write_card(run_dir, checkpoints.export(run_dir, target, checkpoint), window, placeholder)
    qa_model = load_model(str(target))
    dev = load_examples(args.dev_v2 or squad_file("dev"))[: args.limit]
    if abstains:
        mix = {key: recipe[key] for key in ("in_context", "perturbed") if key in recipe}  # as trained
        mixed, built_with = (abstention.v2style_dev(dev, **mix) if not args.dev_v2 else
                             (dev, abstention.v2style_command(**mix, out=Path(args.dev_v2).name)))
        evaluation = {**chosen, **abstention.abstention_evaluation(qa_model, held_out, mixed, built_with, progress)}
        if not chosen:  # given with --checkpoint: the card still says which, and its held-out score
            evaluation["checkpoint"] = {"chosen": checkpoint, "by": "--checkpoint", "held_out_best_f1": {
                checkpoint: evaluation["no_answer"]["tuned_on"]["best_f1"]}}
        if args.hard_set:
            evaluation["hand_written"] = abstention.hard_set_evaluation(
                qa_model, load_examples(args.hard_set), evaluation["no_answer"]["threshold"],
                Path(args.hard_set).name, progress)
    else:
        evaluation = {**chosen, "squad_v1.1_dev": evaluate(
            dev, lambda e: answer(qa_model, e.passage, e.question, n_best=1).text, progress=progress)}
    card.write_card(run_dir, target, window, evaluation)
    print(json.dumps(evaluation))
    return 0
