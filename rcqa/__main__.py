"""Command line: python -m rcqa <verb> ... (every heavy computation, without the UI; `--help` lists the verbs)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rcqa.types import AGGREGATIONS


class CliError(Exception):
    """A user mistake reported as one line on stderr with exit status 2, never a traceback."""


def _read_text(path: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a folder, not a text file") from None
    except UnicodeDecodeError:
        raise CliError(f"{path}: not UTF-8 text (is it a binary file?)") from None


def _answer(args: argparse.Namespace) -> int:
    from rcqa.model import load_model
    from rcqa.qa import answer

    passage = _read_text(args.passage_file)
    result = answer(load_model(args.model, args.device), passage, args.question, n_best=args.n_best)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    if result.best is None:
        print("(no answer)")
        return 0
    print(result.text)
    for rank, span in enumerate(result.nbest[:5], 1):
        print(f"  {rank}. {span.text!r}  p={span.probability:.3f}  chars {span.start_char}-{span.end_char}  window {span.window}")
    return 0


def _explain(args: argparse.Namespace) -> int:
    from rcqa.analysis.report import analyses
    from rcqa.attribution.cache import ResultCache, cached_explain
    from rcqa.attribution.engine import explain
    from rcqa.model import load_model
    from rcqa.types import Example

    settings, aggregation = _preset_settings(args)
    example = Example(id="cli", passage=_read_text(args.passage_file), question=args.question)
    qa_model = load_model(args.model, args.device)

    def progress(layer) -> None:
        errors = ", ".join(f"{c.relative_error:.2%}" for c in layer.completeness)
        print(f"{layer.label:>12}: {layer.seconds:5.2f} s, {layer.completeness[0].steps} steps, "
              f"completeness error {errors}", file=sys.stderr)

    if args.no_cache:
        result, hit = explain(qa_model, example, settings, on_layer=progress), False
    else:
        result, hit = cached_explain(qa_model, example, settings, ResultCache(args.cache_dir), on_layer=progress)
    document = {**result.to_dict(), "analyses": analyses(result, aggregation, args.top_k)}
    Path(args.json).write_text(json.dumps(document, ensure_ascii=False))
    origin = "from the result cache" if hit else f"in {result.seconds:.1f} s"
    print(f"answer {result.answer.text!r}; {len(result.layers)} layers {origin} -> {args.json}", file=sys.stderr)
    return 0


def _faithfulness(args: argparse.Namespace) -> int:
    from rcqa.faithfulness.compare import Protocol
    from rcqa.faithfulness.report import example_faithfulness
    from rcqa.model import load_model
    from rcqa.types import Example

    example = Example(id="cli", passage=_read_text(args.passage_file), question=args.question)
    protocol = Protocol(k=args.k, draws=args.draws, seed=args.seed, operator=args.operator,
                        spare_answer=args.spare_answer)
    document = example_faithfulness(load_model(args.model, args.device), example, args.methods, protocol,
                                    _preset_settings(args)[0])
    Path(args.json).write_text(json.dumps(document, ensure_ascii=False))
    random = document["random"]
    print(f"answer {document['original']['answer']!r} (p = {document['original']['span_probability']:.3f}); "
          f"random over {args.draws} draws: comprehensiveness {random['comprehensiveness']['mean']:.3f}, "
          f"sufficiency {random['sufficiency']['mean']:.3f}, AOPC {random['aopc']['mean']:.3f}", file=sys.stderr)
    for name, method in document["methods"].items():
        print(f"{name:>22}: comprehensiveness {method['comprehensiveness']:.3f}, sufficiency "
              f"{method['sufficiency']:.3f}, AOPC {method['aopc']:.3f}. {method['versus_random']['reading']}",
              file=sys.stderr)
    print(f"-> {args.json}", file=sys.stderr)
    return 0


def _lens(args: argparse.Namespace) -> int:
    from rcqa.lens import answer_lens
    from rcqa.model import load_model
    from rcqa.types import Example, GoldAnswer

    passage = _read_text(args.passage_file)
    gold = tuple(GoldAnswer(text=text, start_char=passage.find(text)) for text in args.gold or ())
    lens = answer_lens(load_model(args.model, args.device),
                       Example(id="cli", passage=passage, question=args.question, answers=gold))
    if lens.note:
        print(f"note: {lens.note}", file=sys.stderr)
    Path(args.json).write_text(json.dumps(lens.to_dict(), ensure_ascii=False))
    for label, *readings in zip(lens.layers, *lens.readings.values()):
        said = "; ".join(f"{reader} {r.span.text if r.span else '(none)'!r} p={r.probability:.3f}, final answer "
                         f"rank {r.final_answer_rank}" for reader, r in zip(lens.readings, readings))
        print(f"{label:>12}: {said}", file=sys.stderr)
    return 0


def _intervene(args: argparse.Namespace) -> int:
    from rcqa.attribution.cache import ResultCache, cached_explain
    from rcqa.attribution.engine import explain
    from rcqa.interventions import intervene
    from rcqa.model import load_model
    from rcqa.presets import PRESETS
    from rcqa.types import Example

    preset = PRESETS[args.preset]
    example = Example(id="cli", passage=_read_text(args.passage_file), question=args.question)
    qa_model = load_model(args.model, args.device)
    if args.no_cache:
        result = explain(qa_model, example, preset.settings)
    else:
        result, _ = cached_explain(qa_model, example, preset.settings, ResultCache(args.cache_dir))
    found = intervene(qa_model, result, k=args.k, draws=args.draws, baseline=args.baseline,
                      aggregation=args.aggregation or preset.aggregation, seed=args.seed)
    Path(args.json).write_text(json.dumps(found.to_dict(), ensure_ascii=False))
    print(f"explained span {found.explained_span!r}, p={found.unchanged.span_probability:.3f} unchanged",
          file=sys.stderr)
    for layer in found.layers:
        random = sum(d.span_probability for d in layer.random) / len(layer.random)
        skip = f", block skipped {layer.skip_block.span_probability:.3f}" if layer.skip_block else ""
        print(f"{layer.label:>12}: top-{args.k} out {layer.topk.span_probability:.3f}, random {random:.3f}, "
              f"bottom-{args.k} {layer.bottomk.span_probability:.3f}{skip}", file=sys.stderr)
    return 0


def _probes(args: argparse.Namespace) -> int:
    from dataclasses import replace

    from tqdm import tqdm

    from rcqa.data import load_examples
    from rcqa.lens import ProbeSettings, layer_scores, train_probes
    from rcqa.lens.probes import home
    from rcqa.model import load_model
    from rcqa.resources import squad_file
    from rcqa.train import refresh_probes_on_card

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


_IG_FIELDS = {"target": "targets", "span": "span", "baseline": "baseline", "rule": "rule", "steps": "steps",
              "tolerance": "tolerance", "max_steps": "max_steps"}


def _preset_settings(args: argparse.Namespace):
    """The preset's IGSettings and token score, with every option given on the command line in its place."""
    from dataclasses import replace

    from rcqa.presets import PRESETS

    preset = PRESETS[args.preset]
    given = {field: getattr(args, option) for option, field in _IG_FIELDS.items() if getattr(args, option) is not None}
    if "targets" in given:
        given["targets"] = tuple(given["targets"])
    if "tolerance" in given and given["tolerance"] <= 0:
        given["tolerance"] = None
    return replace(preset.settings, **given), args.aggregation or preset.aggregation


def _bench(args: argparse.Namespace) -> int:
    from rcqa import bench
    from rcqa.attribution.engine import IGSettings
    from rcqa.model import load_model, random_bert_base

    qa_model = random_bert_base(args.device) if args.random_bert_base else load_model(args.model, args.device)
    if args.completeness:
        report = {"default": bench.completeness_distribution(qa_model, IGSettings()),
                  "span_logits": bench.completeness_distribution(qa_model, IGSettings(targets=("span_logits",))),
                  "paper": bench.completeness_distribution(qa_model, IGSettings.paper())}
        text = "\n".join(f"{name}: median per layer {[f'{e:.2%}' for e in r['median']]}, max "
                         f"{[f'{e:.2%}' for e in r['max']]}; passage words with attribution, fewest per layer "
                         f"{r['attributed_words_min']}" for name, r in report.items())
    else:
        report = bench.run(qa_model, tokens=args.tokens, steps=args.steps, repeats=args.repeats)
        text = bench.format_table(report)
    print(json.dumps(report, indent=2) if args.json else text)
    return 0


def _evaluate(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from rcqa.data import load_examples
    from rcqa.evaluate import evaluate
    from rcqa.model import load_model
    from rcqa.qa import answer
    from rcqa.resources import squad_file

    examples = load_examples(args.data or squad_file("dev"))[: args.limit]
    qa_model = load_model(args.model, args.device)
    metrics = evaluate(examples, lambda e: answer(qa_model, e.passage, e.question, n_best=1).text,
                       progress=lambda items: tqdm(items, desc="evaluating", disable=args.json, mininterval=5))
    if args.json:
        print(json.dumps(metrics))
    else:
        print(f"exact match {metrics['exact_match']:.2f}  F1 {metrics['f1']:.2f}  on {metrics['n']} questions")
    return 0


def _reproduce(args: argparse.Namespace) -> int:
    from rcqa.data import load_examples
    from rcqa.dataset.extras import EXTRAS
    from rcqa.dataset.runner import Job, new_manifest, reproduce
    from rcqa.resources import squad_file

    if args.workers < 1:
        raise CliError("--workers must be at least 1")
    data = squad_file("dev") if args.data == "squad-dev" else Path(args.data)
    examples = load_examples(data)[: args.limit]
    settings, aggregation = _preset_settings(args)
    job = Job(args.model, settings, aggregation, args.top_k, args.device,
              tuple(name for name in EXTRAS if getattr(args, name)), args.draws)
    manifest = reproduce(job, examples, new_manifest(job, args.preset, data, args.limit, args.data), Path(args.out),
                         workers=args.workers, scheduler=args.scheduler, retry_failed=args.retry_failed)
    counts = manifest["counts"]
    print(f"{counts['done']} of {counts['total']} examples in {args.out} ({counts['failed']} failed, "
          f"see manifest.json)", file=sys.stderr)
    return 0


def _report(args: argparse.Namespace) -> int:
    from rcqa.dataset.report import write

    summary = write(args.runs, args.out, images=not args.no_images)
    print(f"report of {summary['n']} examples written to {Path(args.out) / 'report.html'}", file=sys.stderr)
    return 0


def _train(args: argparse.Namespace) -> int:
    from rcqa.data import load_examples
    from rcqa.resources import encoder_path, squad_file
    from rcqa.train import TrainConfig, train

    config = TrainConfig(output_dir=args.output_dir, max_len=args.max_len, doc_stride=args.doc_stride,
                         batch_size=args.batch_size, learning_rate=args.learning_rate, epochs=args.epochs,
                         seed=args.seed, limit=args.limit, warmup_fraction=args.warmup_fraction,
                         first_step=args.first_step)
    examples = load_examples(args.data or squad_file("train"))
    final = train(config, examples, args.base_model or encoder_path())
    print(f"model saved to {final}")
    return 0


def _export(args: argparse.Namespace) -> int:
    from rcqa import model as model_module
    from rcqa.data import load_examples
    from rcqa.evaluate import evaluate
    from rcqa.qa import answer
    from rcqa.resources import squad_file
    from rcqa.train import export, write_card

    window = {"max_len": args.max_len, "doc_stride": args.doc_stride, "max_query_len": 64}
    # load_model reads the window from the card, so the card is written before the metrics exist
    placeholder = {"exact_match": float("nan"), "f1": float("nan"), "n": 0}
    target = export(args.run_dir, args.to, window, placeholder)
    qa_model = model_module.load_model(str(target))
    examples = load_examples(squad_file("dev"))[: args.limit]
    metrics = evaluate(examples, lambda e: answer(qa_model, e.passage, e.question, n_best=1).text)
    write_card(args.run_dir, target, window, metrics)
    print(json.dumps(metrics))
    return 0


def build_parser() -> argparse.ArgumentParser:
    from rcqa.attribution.methods import COMPARED
    from rcqa.dataset.extras import EXTRAS
    from rcqa.faithfulness.deletion import OPERATORS
    from rcqa.interventions import KNOCKOUT_BASELINES
    from rcqa.lens import ProbeSettings
    from rcqa.presets import PRESETS

    parser = argparse.ArgumentParser(prog="python -m rcqa", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    answer = commands.add_parser("answer", help="answer a question about a passage")
    answer.add_argument("--passage-file", required=True)
    answer.add_argument("--question", required=True)
    answer.add_argument("--n-best", type=int, default=20)
    _model_options(answer)
    answer.set_defaults(handler=_answer)

    explain = commands.add_parser("explain", help="layer-wise Integrated Gradients of the answer, as JSON")
    explain.add_argument("--passage-file", required=True)
    explain.add_argument("--question", required=True)
    explain.add_argument("--json", required=True, metavar="OUT", help="where to write the result")
    _ig_options(explain)
    explain.add_argument("--model", default="default", help="'default', a local folder or a hub id")
    explain.add_argument("--device", help="cpu, cuda, ... (default: $RCQA_DEVICE, else CUDA if present)")
    explain.add_argument("--aggregation", choices=AGGREGATIONS,
                         help="token score for the analyses (default: the preset's, l2 or l2_squared)")
    explain.add_argument("--top-k", type=int, default=5)
    explain.add_argument("--cache-dir", help="result cache folder (default: $RCQA_RESULT_CACHE or ~/.cache/rcqa)")
    explain.add_argument("--no-cache", action="store_true")
    explain.set_defaults(handler=_explain)

    faithfulness = commands.add_parser(
        "faithfulness", help="compare attribution methods by deleting their top words against random deletion")
    faithfulness.add_argument("--passage-file", required=True)
    faithfulness.add_argument("--question", required=True)
    faithfulness.add_argument("--json", required=True, metavar="OUT", help="where to write the comparison")
    faithfulness.add_argument("--methods", nargs="+", choices=COMPARED, default=list(COMPARED),
                              help="the methods compared with random (default: all)")
    faithfulness.add_argument("--k", type=int, default=10, help="the deletion curve deletes k = 0 … K top words")
    faithfulness.add_argument("--draws", type=int, default=5, help="random rankings (seeded) averaged over")
    faithfulness.add_argument("--seed", type=int, default=0, help="the first random draw's seed")
    faithfulness.add_argument("--operator", choices=OPERATORS, default="pad",
                              help="; ".join(f"{name}: {text}" for name, text in OPERATORS.items()))
    faithfulness.add_argument("--spare-answer", action="store_true",
                              help="never delete the explained span's own words (test the context a method finds)")
    _ig_options(faithfulness)
    faithfulness.add_argument("--model", default="default", help="'default', a local folder or a hub id")
    faithfulness.add_argument("--device", help="cpu, cuda, ... (default: $RCQA_DEVICE, else CUDA if present)")
    faithfulness.set_defaults(handler=_faithfulness, aggregation=None)

    bench = commands.add_parser("bench", help="time the engine against the Captum loop")
    bench.add_argument("--tokens", type=int, default=256)
    bench.add_argument("--steps", type=int, default=16, help="steps of the same-work comparison")
    bench.add_argument("--repeats", type=int, default=1, help="keep the fastest of N runs")
    bench.add_argument("--completeness", action="store_true",
                       help="instead: completeness error and words with attribution per layer over the gallery, for the "
                            "default settings, the span_logits target and the paper's settings")
    bench.add_argument("--random-bert-base", action="store_true",
                       help="time a randomly initialised BERT-base (12 layers, 768 hidden) instead of --model")
    _model_options(bench)
    bench.set_defaults(handler=_bench)

    evaluate = commands.add_parser("evaluate", help="SQuAD v1.1 exact match and F1")
    evaluate.add_argument("--data", help="SQuAD-format file (default: SQuAD v1.1 dev)")
    evaluate.add_argument("--limit", type=int, help="first N questions only")
    _model_options(evaluate)
    evaluate.set_defaults(handler=_evaluate)

    reproduce = commands.add_parser("reproduce", help="explain a whole dataset on a Dask cluster into a resumable "
                                                      "Parquet store (rows of per-layer analyses + manifest.json)")
    reproduce.add_argument("--data", required=True, help="'squad-dev' (SQuAD v1.1 dev) or a SQuAD/DuoRC file")
    reproduce.add_argument("--limit", type=int, help="first N questions only")
    reproduce.add_argument("--out", required=True, help="run folder; rerunning into it resumes the run")
    reproduce.add_argument("--workers", type=int, default=1, help="worker processes of the local cluster")
    reproduce.add_argument("--scheduler", help="address of an existing Dask scheduler (default: "
                                               "$DASK_SCHEDULER_ADDRESS, else a local cluster on 127.0.0.1)")
    reproduce.add_argument("--retry-failed", action="store_true",
                           help="explain again the examples an earlier run recorded as failed")
    _ig_options(reproduce)
    reproduce.add_argument("--aggregation", choices=AGGREGATIONS, help="token score (default: the preset's)")
    reproduce.add_argument("--top-k", type=int, default=5)
    for name, description in EXTRAS.items():
        reproduce.add_argument(f"--{name}", action="store_true", help=f"also add {description}")
    reproduce.add_argument("--draws", type=int, default=5,
                           help="random draws per example of --faithfulness and --interventions")
    reproduce.add_argument("--model", default="default", help="'default', a local folder or a hub id")
    reproduce.add_argument("--device", help="cpu, cuda, ... (default: $RCQA_DEVICE, else CUDA if present)")
    reproduce.set_defaults(handler=_reproduce)

    report = commands.add_parser("report", help="dataset-level analyses of one or more reproduce runs: summary.json, "
                                                "CSV tables, PNG/SVG figures and an offline HTML page")
    report.add_argument("runs", nargs="+", help="run folders written by `reproduce`; the first is the report's "
                                                "subject, the others are compared with it")
    report.add_argument("--out", required=True, help="folder for the report")
    report.add_argument("--no-images", action="store_true",
                        help="skip PNG/SVG export (the HTML then embeds interactive figures)")
    report.set_defaults(handler=_report)

    lens = commands.add_parser("lens", help="the answer lens: the answer each layer's states hold, read by the QA "
                                            "head and by the trained probes, as JSON")
    _question_options(lens)
    lens.add_argument("--gold", action="append", help="a gold answer, for EM / F1 per layer (repeatable)")
    lens.set_defaults(handler=_lens)

    intervene = commands.add_parser("intervene", help="knock out each layer's top-k / random / bottom-k words (by IG) "
                                                      "and skip each block; the explained span's probability, as JSON")
    _question_options(intervene)
    intervene.add_argument("--k", type=int, default=5, help="words knocked out per layer")
    intervene.add_argument("--draws", type=int, default=5, help="draws of k random passage words per layer")
    intervene.add_argument("--seed", type=int, default=0, help="seed of the random draws")
    intervene.add_argument("--baseline", choices=KNOCKOUT_BASELINES, default="pad",
                           help="what replaces a word's states: " + "; ".join(
                               f"{name}: {text}" for name, text in KNOCKOUT_BASELINES.items()))
    intervene.add_argument("--preset", choices=PRESETS, default="default",
                           help="the IG settings that rank the words (see explain)")
    intervene.add_argument("--aggregation", choices=AGGREGATIONS, help="token score (default: the preset's)")
    intervene.add_argument("--cache-dir", help="result cache folder (default: $RCQA_RESULT_CACHE or ~/.cache/rcqa)")
    intervene.add_argument("--no-cache", action="store_true")
    intervene.set_defaults(handler=_intervene)

    probes = commands.add_parser("probes", help="train the answer lens's per-layer probes on SQuAD v1.1 train (model "
                                                "frozen), score every layer on dev, save them beside the model")
    probes.add_argument("--examples", type=int, default=ProbeSettings.examples,
                        help="training questions, drawn with the seed")
    probes.add_argument("--seed", type=int, default=ProbeSettings.seed)
    probes.add_argument("--dev", type=int, default=500, help="score on the first N dev questions")
    probes.add_argument("--data", help="SQuAD-format training file (default: SQuAD v1.1 train)")
    probes.add_argument("--dev-data", help="SQuAD-format file to score on (default: SQuAD v1.1 dev)")
    probes.add_argument("--out", help="folder to write probes.safetensors and probes.json to (default: the embedded "
                                      "model's own folder for 'default', else the cache: ~/.cache/rcqa/probes/<fingerprint>)")
    probes.add_argument("--model", default="default", help="'default', a local folder or a hub id")
    probes.add_argument("--device", help="cpu, cuda, ... (default: $RCQA_DEVICE, else CUDA if present)")
    probes.set_defaults(handler=_probes)

    train = commands.add_parser("train", help="fine-tune the default QA model on SQuAD v1.1 train")
    train.add_argument("--output-dir", default="runs/default")
    train.add_argument("--data", help="SQuAD-format training file (default: SQuAD v1.1 train)")
    train.add_argument("--base-model", help="encoder folder (default: packaged all-MiniLM-L6-v2)")
    train.add_argument("--max-len", type=int, default=256)
    train.add_argument("--doc-stride", type=int, default=128)
    train.add_argument("--batch-size", type=int, default=32)
    train.add_argument("--learning-rate", type=float, default=1e-4)
    train.add_argument("--epochs", type=float, default=1.0)
    train.add_argument("--seed", type=int, default=0)
    train.add_argument("--warmup-fraction", type=float, default=0.1)
    train.add_argument("--first-step", type=int, default=0,
                       help="warm start: the step --base-model's weights reached in this recipe's batch order")
    train.add_argument("--limit", type=int, help="first N questions only")
    train.set_defaults(handler=_train)

    export = commands.add_parser("export", help="write a trained run as a model folder with its card")
    export.add_argument("run_dir")
    export.add_argument("--to", default=str(Path(__file__).parent / "default_model"))
    export.add_argument("--max-len", type=int, default=384, help="window length it answers with")
    export.add_argument("--doc-stride", type=int, default=128)
    export.add_argument("--limit", type=int, help="evaluate on the first N dev questions only")
    export.set_defaults(handler=_export)
    return parser


def _ig_options(command: argparse.ArgumentParser) -> None:
    from rcqa.attribution.engine import BASELINES
    from rcqa.attribution.quadrature import RULES
    from rcqa.attribution.targets import TARGETS
    from rcqa.presets import PRESETS

    command.add_argument("--preset", choices=PRESETS, default="default",
                         help="; ".join(f"{name}: {p.description}" for name, p in PRESETS.items()).replace("%", "%%")
                         + ". The options below override it.")
    command.add_argument("--target", action="append", choices=TARGETS,
                         help="what to explain (repeat to share one forward pass); default span_log_prob")
    command.add_argument("--span", help="predicted (default), gold, or nbest:K")
    command.add_argument("--baseline", choices=BASELINES)
    command.add_argument("--rule", choices=RULES)
    command.add_argument("--steps", type=int)
    command.add_argument("--tolerance", type=float,
                         help="Gauss–Legendre: refine the worst panel (Kronrod's extension, then halving) until every "
                              "layer's completeness error is under it (0: off; default 0.01)")
    command.add_argument("--max-steps", type=int, help="the most gradients a layer may spend (default 128)")


def _question_options(command: argparse.ArgumentParser) -> None:
    """A passage, a question, where to write the JSON result, and the model that reads them."""
    command.add_argument("--passage-file", required=True)
    command.add_argument("--question", required=True)
    command.add_argument("--json", required=True, metavar="OUT", help="where to write the result")
    command.add_argument("--model", default="default", help="'default', a local folder or a hub id")
    command.add_argument("--device", help="cpu, cuda, ... (default: $RCQA_DEVICE, else CUDA if present)")


def _model_options(command: argparse.ArgumentParser) -> None:
    command.add_argument("--model", default="default", help="'default', a local folder or a hub id")
    command.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: $RCQA_DEVICE, else CUDA if present)")
    command.add_argument("--json", action="store_true", help="print JSON")


def main(argv: list[str] | None = None) -> int:
    from rcqa.data import DataError
    from rcqa.model import ModelLoadError
    from rcqa.qa import InputError
    from rcqa.resources import ResourceError

    args = build_parser().parse_args(argv)
    try:
        return args.handler(args)
    except (CliError, DataError, InputError, ModelLoadError, ResourceError, ValueError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
