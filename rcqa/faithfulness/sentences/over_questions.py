"""The sentence check over many questions: each method's sentence scores against leaving each sentence out and
ContextCite's surrogate, every layer, each against a random ranking and each method against each other, with
paired intervals and the sentences they allow.

One question is explained by every method, then the model's own answer is read again with each sentence deleted
(and, with ablations, with random halves of the sentences deleted); the references are the model's, so they judge
every method alike. A method whose explanation answers differently (AttnLRP answers from its rule copy's forward,
equal to the model's up to float rounding) is left out of that question rather than judged against another span.

One rule for every comparison: the question-by-question differences, their mean and 95 % percentile-bootstrap
interval (rcqa.intervals); told apart only where the interval excludes 0, and no interval below MIN_QUESTIONS.
"""
from __future__ import annotations

import itertools
import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rcqa.faithfulness.sentences.ablation import context_cite, leave_one_sentence_out
from rcqa.faithfulness.sentences.agreement import MEASURES, SentenceCheck, sentence_check
from rcqa.intervals import excludes_zero, mean_with_interval
from rcqa.model import QAModel
from rcqa.types import Example
from rcqa.types.settings import ExplainSettings

MIN_QUESTIONS = 10
# measure → what a sentence says a method does (the number follows), what a random ranking is called, and the
# measure's name where two methods are compared
TOLD = {
    "top_sentence_drop": ("deleting its top context sentence lowers the answer's probability by",
                          "a random context sentence", "the drop its top sentence's deletion causes"),
    "top1_leave_one_out": ("its top context sentence is the one whose deletion lowers the answer most in a share of",
                           "a random pick", "top-1 match with leaving one out"),
    "rho_leave_one_out": ("its sentences rank as leaving each out does, mean Spearman's ρ", "a random ranking",
                          "ρ with leaving one out"),
    "rho_surrogate": ("its sentences rank as ContextCite's surrogate does, mean Spearman's ρ", "a random ranking",
                      "ρ with ContextCite's surrogate"),
}


@dataclass(frozen=True)
class QuestionChecks:
    """One question's checks: by method, those whose explanation explains the answer the references read."""

    id: str
    sentences: int
    held_out_r2: float | None  # the surrogate's, on its held-out ablations; None without one
    layers: list[str]
    checks: dict[str, SentenceCheck]

    def to_dict(self) -> dict:
        return {"id": self.id, "sentences": self.sentences, "held_out_r2": self.held_out_r2, "layers": self.layers,
                "checks": {name: check.to_dict() for name, check in self.checks.items()}}

    @classmethod
    def from_dict(cls, data: dict) -> QuestionChecks:
        return cls(data["id"], data["sentences"], data["held_out_r2"], data["layers"],
                   {name: SentenceCheck.from_dict(check) for name, check in data["checks"].items()})


def check_question(qa_model: QAModel, example: Example, settings: Mapping[str, ExplainSettings],
                   ablations: int = 32, seed: int = 0) -> QuestionChecks | None:
    """Every method's check on one question, against the first method's answer; None where it abstains."""
    from rcqa.attribution.explanation import explain

    results = {name: explain(qa_model, example, chosen) for name, chosen in settings.items()}
    best = next(iter(results.values())).answer.best
    if best is None:
        return None
    chars = (best.start_char, best.end_char)
    ablation = leave_one_sentence_out(qa_model, example, chars)
    surrogate = context_cite(qa_model, example, chars, ablations, ablations // 4, seed) if ablations else None
    checks = {name: sentence_check(result, ablation, surrogate) for name, result in results.items()
              if result.answer.best is not None and (result.answer.best.start_char, result.answer.best.end_char)
              == chars}
    return QuestionChecks(example.id, len(ablation.sentences), None if surrogate is None else surrogate.held_out_r2,
                          next(iter(results.values())).layers, checks)


def checked_questions(qa_model: QAModel, examples: Iterable[Example], settings: Mapping[str, ExplainSettings],
                      kept: Path, ablations: int = 32) -> Iterator[QuestionChecks]:
    """Each question's checks, read from `kept` (JSON lines) where an earlier sitting wrote them, else computed and
    appended there: a long run stops and resumes at the next question. An abstention is kept as one too. Its first
    line is what the checks were computed with; ValueError where that differs (the model, a method's settings, the
    ablations), rather than mixing two protocols in one summary."""
    # as the file reads it back (a tuple comes back a list), so that an unchanged protocol compares equal
    protocol = json.loads(json.dumps({"fingerprint": qa_model.fingerprint, "ablations": ablations,
                                      "settings": {name: chosen.to_dict() for name, chosen in settings.items()}}))
    written, rows = _read(kept) if kept.is_file() else (None, [])
    if written is not None and written != protocol:
        raise ValueError(f"{kept} holds checks computed with another model, methods or ablations: choose another "
                         "folder")
    done = {row["id"]: row for row in rows}
    with kept.open("a") as out:
        if written is None:
            out.write(json.dumps({"protocol": protocol}) + "\n")
        for example in examples:
            if example.id not in done:
                found = check_question(qa_model, example, settings, ablations)
                done[example.id] = found.to_dict() if found else {"id": example.id, "abstained": True}
                out.write(json.dumps(done[example.id]) + "\n")
                out.flush()
            if not done[example.id].get("abstained"):
                yield QuestionChecks.from_dict(done[example.id])


def read_checks(kept: Path) -> tuple[dict, list[QuestionChecks]]:
    """What a checked_questions file holds: its protocol, and the questions' checks in the order they were done (the
    abstentions left out)."""
    protocol, rows = _read(kept)
    return protocol or {}, [QuestionChecks.from_dict(row) for row in rows if not row.get("abstained")]


def _read(kept: Path) -> tuple[dict | None, list[dict]]:
    """A checks file's protocol (its first line; None in an empty file) and its rows, one a line."""
    lines = kept.read_text().splitlines()
    return (json.loads(lines[0])["protocol"] if lines else None), [json.loads(line) for line in lines[1:]]


def summarize(questions: list[QuestionChecks], methods: list[str], labels: Mapping[str, str]) -> dict:
    """Per measure and layer: each method's mean with its interval, its paired difference from a random ranking, and
    every pair of methods' paired difference; the surrogate's held-out R²; and the sentences read from them
    (verdicts)."""
    layers = questions[0].layers if questions else []
    values = {name: {measure: _per_question(questions, name, measure) for measure in MEASURES} for name in methods}
    randoms = {name: {measure: _per_question(questions, name, measure, random=True) for measure in MEASURES}
               for name in methods}
    document = {
        "questions": len(questions), "layers": layers, "methods": methods,
        "held_out_r2": mean_with_interval(np.array([np.nan if q.held_out_r2 is None else q.held_out_r2
                                                    for q in questions], dtype=float)),
        "means": {measure: {name: _by_layer(values[name][measure]) for name in methods} for measure in MEASURES},
        "against_random": {measure: {name: _by_layer(values[name][measure] - randoms[name][measure])
                                     for name in methods} for measure in MEASURES},
        "between": {measure: [{"a": a, "b": b, "by_layer": _by_layer(values[a][measure] - values[b][measure])}
                              for a, b in itertools.combinations(methods, 2)] for measure in MEASURES}}
    document["verdicts"] = verdicts(document, labels)
    return document


def verdicts(document: dict, labels: Mapping[str, str], layer: int = 0) -> list[str]:
    """At `layer` (by default the embeddings' output, the input the references delete from: at the last block's
    output the QA head reads the span's own tokens alone, so no context sentence scores there), each method against
    a random ranking and each pair of methods, on every measure the run defines, by the one rule (module
    docstring)."""
    said, at = [], document["layers"][layer] if document["layers"] else ""
    for measure, (does, random, called) in TOLD.items():
        for name in document["methods"]:
            mean, against = document["means"][measure][name][layer], document["against_random"][measure][name][layer]
            if mean["mean"] is not None:
                said.append(f"{labels[name]} at the {at}: {does} {mean['mean']:.3f}, {_against(against, random)}.")
        for pair in document["between"][measure]:
            if (chosen := pair["by_layer"][layer])["mean"] is not None:
                said.append(f"{labels[pair['a']]} against {labels[pair['b']]} at the {at} on {called}: "
                            f"{_between(chosen)}.")
    return said


def table(document: dict, labels: Mapping[str, str], layer: int = 0) -> str:
    """A markdown table at `layer`: per measure and method, the mean and its difference from a random ranking, each
    with its 95 % interval."""
    lines = [f"| measure, at the {document['layers'][layer]} | method | mean [95 %] | minus a random ranking [95 %] | "
             "questions |", "|---|---|---|---|---|"]
    for measure, (_, _, called) in TOLD.items():
        for name in document["methods"]:
            mean, against = document["means"][measure][name][layer], document["against_random"][measure][name][layer]
            if mean["mean"] is not None:
                lines.append(f"| {called} | {labels[name]} | {_cell(mean)} | {_cell(against)} | {mean['n']} |")
    return "\n".join(lines)


def _cell(interval: dict) -> str:
    return _signed(interval["mean"]) if interval["low"] is None else _interval(interval)


def _per_question(questions: list[QuestionChecks], method: str, measure: str, random: bool = False) -> np.ndarray:
    """questions × layers, NaN where the method left the question out or the measure is undefined there."""
    rows = []
    for question in questions:
        check = question.checks.get(method)
        values = [None] * len(question.layers) if check is None else getattr(check, measure)
        reference = None if check is None else check.random_value(measure)
        rows.append([np.nan if value is None or (random and reference is None) else reference if random else value
                     for value in values])
    return np.array(rows, dtype=float).reshape(len(questions), -1)


def _by_layer(values: np.ndarray) -> list[dict]:
    return [mean_with_interval(column) for column in values.T]


def _told_apart(interval: dict) -> bool:
    return interval["n"] >= MIN_QUESTIONS and excludes_zero(interval["low"], interval["high"])


def _between(interval: dict) -> str:
    if interval["low"] is None or interval["n"] < MIN_QUESTIONS:
        return f"{interval['mean']:+.3f}, {interval['n']} questions are too few to tell them apart"
    told = "told apart" if _told_apart(interval) else "not told apart"
    return f"{_interval(interval)}, {told} ({interval['n']} questions)"


def _interval(interval: dict) -> str:
    return f"{_signed(interval['mean'])} [{_signed(interval['low'])}, {_signed(interval['high'])}]"


def _signed(value: float) -> str:
    """A value to three decimals, or, where those would show a bound that is not 0 as 0, to two significant
    figures: an interval that excludes 0 never reads as reaching it."""
    return f"{value:+.1e}" if value != 0 and abs(value) < 0.0005 else f"{value:+.3f}"


def _against(interval: dict, random: str) -> str:
    if interval["low"] is None or interval["n"] < MIN_QUESTIONS:
        return f"{interval['n']} questions are too few to tell it from {random} ({interval['mean']:+.3f})"
    if not _told_apart(interval):
        return f"not told apart from {random} ({_interval(interval)}, {interval['n']} questions)"
    return f"{'above' if interval['low'] > 0 else 'below'} {random} by {_interval(interval)} ({interval['n']} questions)"
