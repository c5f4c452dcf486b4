"""What several verbs share: one-line user errors, the example read from the command line, and the option
groups (model, example, explanation settings, result cache) defined once."""
from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from rcqa.types import AGGREGATIONS, Aggregation

if TYPE_CHECKING:
    from rcqa.attribution.engine import LayerResult
    from rcqa.attribution.passage import WindowProgress
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.model import QAModel
    from rcqa.types import Attribution, Example


class CliError(Exception):
    """A user mistake reported as one line on stderr with exit status 2, never a traceback."""


def read_text(path: str) -> str:
    try:
        return Path(path).read_bytes().decode("utf-8-sig")
    except FileNotFoundError:
        raise CliError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise CliError(f"{path}: is a folder, not a text file") from None
    except UnicodeDecodeError:
        raise CliError(f"{path}: not UTF-8 text (is it a binary file?)") from None


def cli_example(args: argparse.Namespace, gold: list[str] | None = None) -> Example:
    """The example given by --passage-file and --question; each gold text is found in the passage."""
    from rcqa.types import Example, GoldAnswer

    passage = read_text(args.passage_file)
    answers = tuple(GoldAnswer(text=text, start_char=passage.find(text)) for text in gold or ())
    return Example(id="cli", passage=passage, question=args.question, answers=answers)


def add_model(command: argparse.ArgumentParser) -> None:
    command.add_argument("--model", default="default", help="'default', a local folder or a hub id")
    command.add_argument("--device", help="cpu, cuda, cuda:1 ... (default: $RCQA_DEVICE, else CUDA if present)")


def add_null(command: argparse.ArgumentParser) -> None:
    """--allow-null / --no-null: whether the model may answer "no answer" (default: what its card says)."""
    group = command.add_mutually_exclusive_group()
    group.add_argument("--allow-null", dest="allow_null", action="store_true", default=None,
                       help='let the model answer "no answer" when null score - best span score exceeds the card\'s '
                            "threshold (default for models whose card says they were trained with unanswerable "
                            "questions)")
    group.add_argument("--no-null", dest="allow_null", action="store_false", help="always answer with the best span")


def add_print_json(command: argparse.ArgumentParser) -> None:
    command.add_argument("--json", action="store_true", help="print JSON")


def add_example(command: argparse.ArgumentParser, writes: str | None = "the result") -> None:
    """A passage, a question and, unless `writes` is None, where to write the JSON of `writes`."""
    command.add_argument("--passage-file", required=True)
    command.add_argument("--question", required=True)
    if writes:
        command.add_argument("--json", required=True, metavar="OUT", help=f"where to write {writes}")


def add_aggregation(command: argparse.ArgumentParser, help: str = "token score (default: the preset's)") -> None:
    command.add_argument("--aggregation", choices=AGGREGATIONS, help=help)


def add_result_cache(command: argparse.ArgumentParser) -> None:
    command.add_argument("--cache-dir", help="result cache folder (default: $RCQA_RESULT_CACHE or ~/.cache/rcqa)")
    command.add_argument("--no-cache", action="store_true",
                         help="compute afresh and keep nothing, e.g. to time it (by default a result computed before "
                              "with the same model, text and settings is read back, with that run's seconds)")


def explained(args: argparse.Namespace, qa_model: QAModel, example: Example, settings: ExplainSettings,
              on_layer: Callable[[LayerResult | WindowProgress], None] | None = None) -> tuple[Attribution, bool]:
    """The attribution of `example` and whether it came from the result cache (never, with --no-cache)."""
    from rcqa.attribution.cache import ResultCache, cached_explain
    from rcqa.attribution.explanation import explain

    if args.no_cache:
        return explain(qa_model, example, settings, on_layer=on_layer), False
    return cached_explain(qa_model, example, settings, ResultCache(args.cache_dir), on_layer=on_layer)


def add_ig(command: argparse.ArgumentParser) -> None:
    from rcqa.attribution.quadrature import RULES
    from rcqa.attribution.layerwise import LAYERWISE_METHODS
    from rcqa.attribution.settings import BASELINES, FOILS, PRESETS
    from rcqa.attribution.targets import TARGETS

    command.add_argument("--preset", choices=PRESETS, default="default",
                         help="; ".join(f"{name}: {p.description}" for name, p in PRESETS.items()).replace("%", "%%")
                         + ". The options below override it.")
    command.add_argument("--method", choices=LAYERWISE_METHODS,
                         help="; ".join(f"{name}: {method.description}" for name, method in LAYERWISE_METHODS.items())
                         + " (default: IG)")
    own_targets = "".join(f", with --method {name} {' + '.join(method.default_targets)}"
                          for name, method in LAYERWISE_METHODS.items() if method.default_targets)
    command.add_argument("--target", action="append", choices=[name for name in TARGETS if name != "contrast"],
                         help=f"what to explain (repeat to share one forward pass); default span_log_prob{own_targets}")
    command.add_argument("--span", help="predicted (default), gold, or nbest:K")
    command.add_argument("--contrast", metavar="FOIL",
                         help="also explain, first, log p(span) − log p(FOIL): why the span and not the foil. "
                              + "; ".join(f"{name}: {text}" for name, text in FOILS.items()).replace("%", "%%"))
    command.add_argument("--baseline", choices=BASELINES)
    command.add_argument("--rule", choices=RULES)
    command.add_argument("--steps", type=int)
    command.add_argument("--tolerance", type=float,
                         help="Gauss–Legendre: refine the worst panel (Kronrod's extension, then halving) until "
                              "every layer's completeness error is under it (0: off; default 0.01)")
    command.add_argument("--max-steps", type=int, help="the most gradients a layer may spend (default 128)")
    add_null(command)


def add_windows(command: argparse.ArgumentParser) -> None:
    """--windows answer|all: the explained span's window, or every window of the passage in one explanation."""
    from rcqa.attribution.settings import WINDOWS

    command.add_argument("--windows", choices=WINDOWS,
                         help="; ".join(f"{name}: {text}" for name, text in WINDOWS.items()) + " (docs/passages.md)")


_IG_FIELDS = {"target": "targets", "span": "span", "baseline": "baseline", "rule": "rule", "steps": "steps",
              "tolerance": "tolerance", "max_steps": "max_steps", "allow_null": "allow_null",
              "contrast": "contrast", "windows": "windows", "method": "method"}


def preset_settings(args: argparse.Namespace) -> tuple[ExplainSettings, Aggregation]:
    """The preset's ExplainSettings and token score, with every option given on the command line in its place."""
    from rcqa.attribution.settings import PRESETS, resolve

    given = {field: getattr(args, option) for option, field in _IG_FIELDS.items()
             if getattr(args, option, None) is not None}
    if "tolerance" in given and given["tolerance"] <= 0:
        given["tolerance"] = None
    return resolve(args.preset, **given), args.aggregation or PRESETS[args.preset].aggregation


def add_answer_protocol(command: argparse.ArgumentParser) -> None:
    """Whether the explained span's own words may be deleted or knocked out (spared by default)."""
    spare = command.add_mutually_exclusive_group()
    spare.add_argument("--spare-answer", "--outside-span", dest="spare_answer", action="store_true", default=True,
                       help="never delete or knock out the explained span's own words, so that the test asks which "
                            "context each method finds (the default)")
    spare.add_argument("--delete-answer", dest="spare_answer", action="store_false",
                       help="the old protocol: the span's words may be chosen as any passage word (which mostly "
                            "measures that the answer matters, since every method ranks the answer's words first)")
