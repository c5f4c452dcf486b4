"""rcqa from Python, on plain strings: a model (its name or a loaded one), a passage and a question in, a result out.

Thin wrappers over the library, one per capability, with the settings as keyword arguments checked by name (the
answer lens, rcqa.lens, is called on plain strings the same way: see rcqa/lens/__init__.py):

    import rcqa
    result = rcqa.explain("default", passage, question, preset="default", steps=16)
    result.show("heatmap")   # in a notebook, drawn; in a script, opened in the browser (rcqa.types.header.shown)
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rcqa.analysis.registry import AnalysisResult
from rcqa.attention_heads import HeadScores, score_heads
from rcqa.attribution.cache import ResultCache, cached_explain
from rcqa.attribution.explanation import explain as explain_example
from rcqa.attribution.methods import COMPARED
from rcqa.attribution.settings import PRESETS, resolve
from rcqa.dataset.manifest import RunManifest
from rcqa.faithfulness.compare import Comparison, Protocol, compare
from rcqa.faithfulness.sanity import TOP_K, SanityCheck
from rcqa.faithfulness.sentences import SentenceCheck, SentenceEvidence, sentence_evidence
from rcqa.faithfulness.sentences import sentence_check as check_sentences
from rcqa.faithfulness.sanity import sanity_checks as check_sanity
from rcqa.lens.interventions import Interventions
from rcqa.lens.interventions import intervene as knock_out
from rcqa.lens.readout import AnswerLens
from rcqa.model import QAModel, as_model
from rcqa.qa import answer as answer_passage
from rcqa.types import Aggregation, Answer, Attribution, Example, load_result

__all__ = ["AnswerLens", "Comparison", "HeadScores", "Interventions", "SanityCheck", "SentenceCheck", "SentenceEvidence",
           "answer", "compare_methods", "explain", "heads", "intervene", "load_result", "reproduce", "sanity_checks",
           "sentence_check"]  # load_result: this module imports every result kind it may name


def answer(model_or_name: str | QAModel, passage: str, question: str, *, n_best: int = 20,
           device: str | None = None) -> Answer:
    """The model's best answer and its n-best list."""
    return answer_passage(as_model(model_or_name, device), passage, question, n_best=n_best)


def explain(model_or_name: str | QAModel, passage: str, question: str, preset: str = "default", *,
            gold: str | Sequence[str] = (), cache: bool | str | Path | None = False, device: str | None = None,
            **settings) -> Attribution:
    """Layer-wise Integrated Gradients of the answer: the preset's settings (rcqa.PRESETS), each keyword in
    `settings` (a field of rcqa.ExplainSettings) in its place. `gold`: the gold answer text(s), for span="gold" and the
    scores. `cache`: False or None (the default: False) computes afresh and keeps nothing; True reads and keeps
    results in the result cache's folder (RCQA_RESULT_CACHE, else RCQA_CACHE_DIR/results, ~/.cache/rcqa/results);
    a path, in that folder. A result the cache holds comes back in a fraction of the time, with the `seconds` and
    `computed_at` of the run that computed it, so leave it off to time explain. contrast="runner-up" (or another
    FOIL: rcqa.attribution.settings.FOILS) adds, first, the target log p(span) − log p(foil)."""
    chosen = resolve(preset, **settings)  # a bad setting is refused before a model loads
    qa_model, example = as_model(model_or_name, device), Example.of(passage, question, gold)
    if (kept := _result_cache(cache)) is None:
        return explain_example(qa_model, example, chosen)
    return cached_explain(qa_model, example, chosen, kept)[0]


def _result_cache(cache: bool | str | Path | None) -> ResultCache | None:
    """explain's `cache` argument as a ResultCache, or None to keep nothing (None reads as off, as in Python at large:
    it once meant the default folder)."""
    if cache is None or cache is False:
        return None
    return ResultCache(None if cache is True else cache)


def compare_methods(model_or_name: str | QAModel, passage: str, question: str, methods: Sequence[str] = COMPARED,
                    preset: str = "default", *, k: int = 10, draws: int = 5, seed: int = 0, operator: str = "pad",
                    spare_answer: bool = False, gold: str | Sequence[str] = (), device: str | None = None,
                    **settings) -> Comparison:
    """Which explanation to trust: each method's ranking of the passage words, tested by deleting its top words
    (k = 0..k and the top fractions) and re-answering, against `draws` random rankings."""
    protocol = Protocol(k=k, draws=draws, seed=seed, operator=operator, spare_answer=spare_answer)
    chosen = resolve(preset, **settings)
    return compare(as_model(model_or_name, device), Example.of(passage, question, gold), methods, protocol, chosen)


def sanity_checks(model_or_name: str | QAModel, passage: str, question: str, methods: Sequence[str] = COMPARED,
                  preset: str = "default", *, k: int = TOP_K, seed: int = 0, gold: str | Sequence[str] = (),
                  device: str | None = None, **settings) -> SanityCheck:
    """Adebayo et al.'s sanity checks: each method's word scores on copies of the model with the QA head, then each
    block from the top, then the embeddings re-initialised (cascading, and each alone), against its scores on the
    trained model (Spearman's ρ, top-k overlap), per entry (rcqa.faithfulness.entry.Entry: a method under one of
    its rankings); `.verdict(entry)` says whether a method fails, `.to_dict()` gives
    every number. Integrated Gradients costs the most: leave it out of `methods` for a quick check."""
    chosen = resolve(preset, **settings)
    return check_sanity(as_model(model_or_name, device), Example.of(passage, question, gold), methods, chosen, k, seed)


def intervene(model_or_name: str | QAModel, passage: str | Attribution, question: str | None = None,
              preset: str = "default", *, k: int = 5, draws: int = 5, baseline: str = "pad",
              aggregation: Aggregation | None = None, seed: int = 0, device: str | None = None, **settings) -> Interventions:
    """Knock out each layer's top-k, bottom-k and k random passage words (and skip each block), and read the
    explained span's probability again. `passage` may be an explanation rcqa.explain already made (then give no
    question or settings); otherwise the passage is explained with the preset first."""
    qa_model = as_model(model_or_name, device)
    if isinstance(passage, Attribution):
        if question is not None or settings:
            raise TypeError("intervene() on an explanation takes no question or settings: they are the explanation's")
        result = passage
    else:
        if question is None:
            raise TypeError("intervene() needs a question with a passage")
        result = explain(qa_model, passage, question, preset, **settings)
    return knock_out(qa_model, result, k=k, draws=draws, baseline=baseline,
                     aggregation=aggregation or PRESETS[preset].aggregation, seed=seed)


def heads(model_or_name: str | QAModel, passage: str, question: str, *, fill: str = "zero", gold: str | Sequence[str] = (),
          device: str | None = None) -> HeadScores:
    """Which attention heads carry the answer: every head of every block knocked out alone (its context replaced
    by `fill`: "zero", or "mean", its mean over the passage) and its gradient importance, in the window of the
    model's answer; result.agreement() says how well each score predicts the knock-outs."""
    return score_heads(as_model(model_or_name, device), Example.of(passage, question, gold), fill)


def sentence_check(model_or_name: str | QAModel, result: Attribution, *, ablations: int = 32,
                   aggregation: Aggregation = "l2", device: str | None = None) -> tuple[SentenceEvidence, SentenceCheck]:
    """What the model itself says of the sentences of an explanation rcqa.explain made: the answer read again with
    each sentence deleted and with `ablations` random halves deleted, to which ContextCite's surrogate is fitted
    (SentenceEvidence: `.ablation.drops`, `.surrogate.weights`), and the explanation's sentence scores checked
    against them layer by layer (SentenceCheck: Spearman's ρ, top-1 match, the top sentence's drop, and what a
    random ranking scores on each). Over many questions: `python -m rcqa sentence-check`."""
    evidence = sentence_evidence(as_model(model_or_name, device), result.example, result.explained_span(), ablations)
    return evidence, check_sentences(result, evidence.ablation, evidence.surrogate, aggregation)


def analyze(name: str, model_or_name: str | QAModel, passage: str, question: str, preset: str = "default", *,
            k: int = 5, aggregation: Aggregation | None = None, gold: str | Sequence[str] = (),
            cache: bool | str | Path | None = False, device: str | None = None, **settings) -> AnalysisResult:
    """One registered analysis (rcqa.analysis.registered.ANALYSES: "roles", "pos", "similarity", "agreement") of the
    preset's explanation of the answer, as its typed result (`to_dict()`, `row()`). An analysis of two methods
    ("agreement") explains the question with the other method too; `cache` as in explain keeps both."""
    from rcqa.analysis_run import run_analysis

    qa_model = as_model(model_or_name, device)
    result = explain(qa_model, passage, question, preset, gold=gold, cache=cache, **settings)
    return run_analysis(name, qa_model, result, resolve(preset, **settings),
                        aggregation or PRESETS[preset].aggregation, k, cache=_result_cache(cache))


def reproduce(out: str | Path, model: str | QAModel = "default", data: str | Path = "squad-dev",
              preset: str = "default", *, limit: int | None = None, workers: int = 1, scheduler: str | None = None,
              top_k: int = 5, extras: Sequence[str] = (), draws: int = 5, retry_failed: bool = False,
              device: str | None = None, **settings) -> RunManifest:
    """Explain a whole dataset into the run folder `out` (resumable; what `rcqa reproduce` does), on `workers`
    local processes or a Dask scheduler; returns the run's manifest. The workers load the model by name."""
    from rcqa.data import load_examples
    from rcqa.dataset.runner import Job, new_manifest
    from rcqa.dataset.runner import reproduce as run
    from rcqa.resources import squad_file

    name = model.name if isinstance(model, QAModel) else model
    path = squad_file("dev") if str(data) == "squad-dev" else Path(data)
    examples = load_examples(path)[:limit]
    job = Job(name, resolve(preset, **settings), PRESETS[preset].aggregation, top_k, device, tuple(extras), draws)
    manifest = new_manifest(job, preset, path, limit, str(data))
    return run(job, examples, manifest, Path(out), workers=workers, scheduler=scheduler, retry_failed=retry_failed)

