"""Verbs on one example (a passage file and a question): answer, explain, faithfulness, lens, intervene."""
from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from rcqa.cli.options import (add_aggregation, add_answer_protocol, add_example, add_ig, add_model, add_null,
                              add_print_json, add_result_cache, add_windows, cli_example, explained, preset_settings,
                              read_text)
from rcqa.types.granularity import GRANULARITIES

if TYPE_CHECKING:
    from rcqa.types import Answer, Attribution


def add_answer(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("answer", help="answer a question about a passage")
    add_example(command, writes=None)
    command.add_argument("--n-best", type=int, default=20)
    add_null(command)
    add_model(command)
    add_print_json(command)
    command.set_defaults(handler=_answer)


def _answer(args: argparse.Namespace) -> int:
    from rcqa.model import load_model
    from rcqa.qa import answer

    passage = read_text(args.passage_file)
    result = answer(load_model(args.model, args.device), passage, args.question, n_best=args.n_best,
                    allow_null=args.allow_null)
    if args.json:
        print(json.dumps(result.to_dict(), indent=2, ensure_ascii=False))
        return 0
    if result.best is None or result.abstained:
        null = result.no_answer
        print("(no answer)" if null is None else f"(no answer)  p={null.probability:.3f}")
        if result.best is None:
            return 0
        print(f"  rejected best span: {result.best.text!r}")
    else:
        print(result.text)
    for rank, span in enumerate(result.nbest[:5], 1):
        print(f"  {rank}. {span.text!r}  p={span.probability:.3f}  chars {span.start_char}-{span.end_char}  window {span.window}")
    return 0


def add_explain(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("explain", help="layer-wise Integrated Gradients (or --method attnlrp) of the answer, as JSON")
    add_example(command)
    add_ig(command)
    add_windows(command)
    add_model(command)
    add_aggregation(command, help="token score for the analyses (default: the preset's, l2 or l2_squared)")
    command.add_argument("--top-k", type=int, default=5)
    command.add_argument("--granularity", choices=GRANULARITIES, action="append",
                         help="also write every layer's scores summed by token, word, phrase or sentence under "
                              "'granularity' (repeatable; the --aggregation's scores)")
    add_result_cache(command)
    command.set_defaults(handler=_explain)


def _explain(args: argparse.Namespace) -> int:
    from rcqa.analysis.report import analyses
    from rcqa.attribution.passage import WindowProgress
    from rcqa.lens.contrast import contrast_summary
    from rcqa.model import load_model

    settings, aggregation = preset_settings(args)
    example = cli_example(args)
    qa_model = load_model(args.model, args.device)

    def progress(layer) -> None:
        if isinstance(layer, WindowProgress):  # a window of a whole-passage layer: on a terminal, overwritten
            if sys.stderr.isatty():
                print(f"{layer.describe():<72}", end="\r", file=sys.stderr)
            return
        errors = ", ".join(f"{c.relative_error:.2%}" for c in layer.completeness)
        windows = f" over {len(layer.completeness[0].window_sums)} windows" if layer.completeness[0].window_sums else ""
        check = layer.completeness[0]
        print(f"{layer.label:>12}: {layer.seconds:5.2f} s, {check.steps} steps, {check.kind} error {errors}{windows}",
              file=sys.stderr)

    result, hit = explained(args, qa_model, example, settings, on_layer=progress)
    document = {**result.to_dict(), "from_cache": hit, "analyses": analyses(result, aggregation, args.top_k)}
    if args.granularity:
        document["granularity"] = {name: result.granularity(name, aggregation).to_dict()
                                   for name in dict.fromkeys(args.granularity)}
    if settings.contrast:
        document["contrast"] = contrast_summary(qa_model, result)
        print(document["contrast"]["lens_reading"], file=sys.stderr)
    Path(args.json).write_text(json.dumps(document, ensure_ascii=False))
    origin = (f"from the cache, {_computed(result)} (--no-cache times it afresh)" if hit
              else f"in {result.seconds:.1f} s")
    print(f"{_said(result.answer)}; {len(result.layers)} layers {origin} -> {args.json}", file=sys.stderr)
    return 0


def _computed(result: Attribution) -> str:
    """When and in how long a kept result was computed, in local time: its seconds are that run's, not this one's."""
    if result.computed_at is None:
        return f"computed in {result.seconds:.1f} s before results recorded their date"
    when = dt.datetime.fromisoformat(result.computed_at).astimezone()
    return f"computed in {result.seconds:.1f} s on {when:%Y-%m-%d %H:%M}"


def _said(answer: Answer) -> str:
    """The answer in a few words, an abstention with p(no answer) and the best span it rejected."""
    if not answer.abstained:
        return f"answer {answer.text!r}"
    rejected = f", rejected best span {answer.best.text!r}" if answer.best else ""
    assert answer.no_answer is not None  # an abstention is "no answer" chosen
    return f"no answer (p = {answer.no_answer.probability:.3f}{rejected})"


def add_faithfulness(commands: argparse._SubParsersAction) -> None:
    from rcqa.attribution.methods import COMPARED, OFFERED
    from rcqa.faithfulness.deletion import OPERATORS

    command = commands.add_parser(
        "faithfulness", help="compare attribution methods by deleting their top words against random deletion")
    add_example(command, writes="the comparison")
    command.add_argument("--methods", nargs="+", choices=OFFERED, default=list(COMPARED),
                         help=f"the methods compared with random (default: {', '.join(COMPARED)})")
    command.add_argument("--k", type=int, default=10, help="the deletion curve deletes k = 0 … K top words")
    command.add_argument("--draws", type=int, default=5, help="random rankings (seeded) averaged over")
    command.add_argument("--seed", type=int, default=0, help="the first random draw's seed")
    command.add_argument("--operator", choices=OPERATORS, default="pad",
                         help="; ".join(f"{name}: {text}" for name, text in OPERATORS.items()))
    add_answer_protocol(command)
    command.add_argument("--naopc-beam", type=int, default=0, metavar="B",
                         help="also search AOPC's bounds over orderings with a beam of B (Edin et al.'s NAOPC) and "
                              "report normalised AOPC; costs about 2·B·words·K re-answers (default 0: not searched)")
    command.add_argument("--sanity", action="store_true",
                         help="also run Adebayo et al.'s sanity checks: each method's word scores again on copies with "
                              "the QA head, then each block from the top, then the embeddings re-initialised (cascade, "
                              "and each alone); adds their rank correlations with the trained model's (costs two runs "
                              "of the methods per block; Integrated Gradients dominates)")
    add_ig(command)
    add_model(command)
    command.set_defaults(handler=_faithfulness, aggregation=None)


def _faithfulness(args: argparse.Namespace) -> int:
    from rcqa.faithfulness.compare import Protocol
    from rcqa.faithfulness.report import example_faithfulness
    from rcqa.faithfulness.sanity import sanity_checks
    from rcqa.model import load_model

    protocol = Protocol(k=args.k, draws=args.draws, seed=args.seed, operator=args.operator,
                        spare_answer=args.spare_answer, naopc_beam=args.naopc_beam)
    qa_model, example, settings = load_model(args.model, args.device), cli_example(args), preset_settings(args)[0]
    report = example_faithfulness(qa_model, example, args.methods, protocol, settings)
    checked = sanity_checks(qa_model, example, args.methods, settings, seed=args.seed) if args.sanity else None
    if checked is not None:
        report = dataclasses.replace(report, sanity=checked.to_dict())
    report.save(args.json)
    original, random = report.original, report.random
    random_means = {name: None if found is None else found.mean for name, found in random.summaries.items()}
    print(f"answer {original.answer!r} (p = {original.span_probability:.3f}); random over {args.draws} draws: "
          f"{_summaries_text(random_means)}", file=sys.stderr)
    print(report.verdict, file=sys.stderr)
    for name, entry in report.methods.items():
        print(f"{name:>31}: {_summaries_text(entry.summaries)}. {entry.versus_random.reading}", file=sys.stderr)
    if checked is not None:
        for compared in checked.entries:
            print(checked.verdict(compared), file=sys.stderr)
    print(f"-> {args.json}", file=sys.stderr)
    return 0


def _summaries_text(values: dict[str, float | None]) -> str:
    """Each summary computed, as "AOPC 0.241", in the registry's order (rcqa.faithfulness.summaries)."""
    from rcqa.faithfulness.summaries import SUMMARIES

    return ", ".join(f"{SUMMARIES[name].label} {value:.3f}" for name, value in values.items() if value is not None)


def add_lens(commands: argparse._SubParsersAction) -> None:
    command = commands.add_parser("lens", help="the answer lens: the answer each layer's states hold, read by the QA "
                                               "head and by the trained probes, as JSON")
    add_example(command)
    add_model(command)
    command.add_argument("--gold", action="append", help="a gold answer, for EM / F1 per layer (repeatable)")
    command.set_defaults(handler=_lens)


def _lens(args: argparse.Namespace) -> int:
    from rcqa.lens import answer_lens
    from rcqa.model import load_model
    from rcqa.types import storage

    found = answer_lens(load_model(args.model, args.device), cli_example(args, gold=args.gold))
    if found.note:
        print(f"note: {found.note}", file=sys.stderr)
    Path(args.json).write_text(storage.stored_json(found))  # with its kind: rcqa.load_result reads it
    for label, *readings in zip(found.layers, *found.readings.values()):
        said = "; ".join(f"{reader} {r.span.text if r.span else '(none)'!r} p={r.probability:.3f}, final answer "
                         f"rank {r.final_answer_rank}" for reader, r in zip(found.readings, readings))
        print(f"{label:>12}: {said}", file=sys.stderr)
    return 0


def add_intervene(commands: argparse._SubParsersAction) -> None:
    from rcqa.attribution.settings import PRESETS
    from rcqa.lens.interventions import KNOCKOUT_BASELINES

    command = commands.add_parser("intervene", help="knock out each layer's top-k / random / bottom-k words (by IG) "
                                                    "and skip each block; the explained span's probability, as JSON")
    add_example(command)
    add_model(command)
    command.add_argument("--k", type=int, default=5, help="words knocked out per layer")
    command.add_argument("--draws", type=int, default=5, help="draws of k random passage words per layer")
    command.add_argument("--seed", type=int, default=0, help="seed of the random draws")
    command.add_argument("--baseline", choices=KNOCKOUT_BASELINES, default="pad",
                         help="what replaces a word's states: " + "; ".join(
                             f"{name}: {text}" for name, text in KNOCKOUT_BASELINES.items()))
    command.add_argument("--preset", choices=PRESETS, default="default",
                         help="the explanation settings that rank the words (see explain)")
    add_answer_protocol(command)
    add_aggregation(command)
    add_result_cache(command)
    command.set_defaults(handler=_intervene)


def _intervene(args: argparse.Namespace) -> int:
    from rcqa.attribution.settings import PRESETS, resolve
    from rcqa.lens.interventions import intervene
    from rcqa.model import load_model
    from rcqa.types import storage

    qa_model = load_model(args.model, args.device)
    result, _ = explained(args, qa_model, cli_example(args), resolve(args.preset))
    found = intervene(qa_model, result, k=args.k, draws=args.draws, baseline=args.baseline,
                      aggregation=args.aggregation or PRESETS[args.preset].aggregation, seed=args.seed,
                      outside_span=args.spare_answer)
    Path(args.json).write_text(storage.stored_json(found))  # with its kind: rcqa.load_result reads it
    print(f"explained span {found.explained_span!r}, p={found.unchanged.span_probability:.3f} unchanged",
          file=sys.stderr)
    for layer in found.layers:
        random = sum(d.span_probability for d in layer.random) / len(layer.random)
        skip = f", block skipped {layer.skip_block.span_probability:.3f}" if layer.skip_block else ""
        print(f"{layer.label:>12}: top-{args.k} out {layer.topk.span_probability:.3f}, random {random:.3f}, "
              f"bottom-{args.k} {layer.bottomk.span_probability:.3f}{skip}", file=sys.stderr)
    return 0
