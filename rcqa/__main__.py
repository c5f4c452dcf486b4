"""Command line: python -m rcqa {answer,evaluate,train} ... (every heavy computation, without the UI)."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


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


def _train(args: argparse.Namespace) -> int:
    from rcqa.data import load_examples
    from rcqa.resources import encoder_path, squad_file
    from rcqa.train import TrainConfig, train

    config = TrainConfig(output_dir=args.output_dir, max_len=args.max_len, doc_stride=args.doc_stride,
                         batch_size=args.batch_size, learning_rate=args.learning_rate, epochs=args.epochs,
                         seed=args.seed, limit=args.limit)
    examples = load_examples(args.data or squad_file("train"))
    final = train(config, examples, args.base_model or encoder_path())
    print(f"model saved to {final}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m rcqa", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    answer = commands.add_parser("answer", help="answer a question about a passage")
    answer.add_argument("--passage-file", required=True)
    answer.add_argument("--question", required=True)
    answer.add_argument("--n-best", type=int, default=20)
    _model_options(answer)
    answer.set_defaults(handler=_answer)

    evaluate = commands.add_parser("evaluate", help="SQuAD v1.1 exact match and F1")
    evaluate.add_argument("--data", help="SQuAD-format file (default: SQuAD v1.1 dev)")
    evaluate.add_argument("--limit", type=int, help="first N questions only")
    _model_options(evaluate)
    evaluate.set_defaults(handler=_evaluate)

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
    train.add_argument("--limit", type=int, help="first N questions only")
    train.set_defaults(handler=_train)
    return parser


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
    except (CliError, DataError, InputError, ModelLoadError, ResourceError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
