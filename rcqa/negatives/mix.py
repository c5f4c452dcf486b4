"""Mixing negatives into a question set, holding whole articles out, and writing the v2.0 file."""
from __future__ import annotations

import functools
import random
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable

from rcqa.negatives.kinds import PERTURBATIONS, negative_kind
from rcqa.negatives.paragraphs import Article, in_context_negative, other_paragraph_negative
from rcqa.negatives.perturbations import NOUN_TAGS, perturbed_negative
from rcqa.text import NamedEntity, WrittenWord, named_entities, tagged_words
from rcqa.types import Example

SQUAD2_SHARE = 1 / 3  # SQuAD 2.0's share of unanswerable questions, about a third
FAMILIES = ("perturbation", "in_context", "other_paragraph")  # the order a question tries them in, quotas first


def with_negatives(examples: list[Example], share: float = SQUAD2_SHARE, in_context: float = 0.5,
                   seed: int = 0, perturbed: float = 0.0) -> list[Example]:
    """The examples followed by unanswerable ones built from them, so that about `share` of all are unanswerable.

    Source questions are drawn at random (seeded), each giving at most one negative; `perturbed` of the negatives
    are question perturbations and `in_context` in-context ones where the draw allows, the rest other-paragraph
    ones. A question tries first the kinds still short of their share (in that order), then the others. A
    perturbation tries its five kinds, the one made least so far first (PERTURBATIONS' order among equals)."""
    if not 0 <= share < 1 or not 0 <= in_context <= 1:
        raise ValueError("share must be in [0, 1) and in_context in [0, 1]")
    if not 0 <= perturbed <= 1 - in_context:
        raise ValueError("perturbed must be in [0, 1 - in_context]: the shares of the negatives add up to at most 1")
    rng = random.Random(seed)
    wanted = round(len(examples) * share / (1 - share))
    quota = {"perturbation": round(wanted * perturbed), "in_context": round(wanted * in_context)}
    quota["other_paragraph"] = wanted - quota["perturbation"] - quota["in_context"]
    families = FAMILIES if perturbed else FAMILIES[1:]  # without perturbations, spaCy never runs
    articles = _articles(examples)
    entities, nouns = _entities_by_article(articles), _nouns_by_article(articles)
    order = list(range(len(examples)))
    rng.shuffle(order)
    negatives: list[Example] = []
    counts: Counter[str] = Counter()
    for index in order:
        if len(negatives) == wanted:
            break
        example = examples[index]
        if example.is_impossible or not example.answers:
            continue
        for family in sorted(families, key=lambda f: counts[f] >= quota[f]):  # a stable sort: short ones first
            if family == "perturbation":
                built = perturbed_negative(example, sorted(PERTURBATIONS, key=lambda k: counts[k]), rng,
                                           functools.partial(entities, example.title),
                                           functools.partial(nouns, example.title))
            elif family == "in_context":
                built = in_context_negative(example)
            else:
                built = other_paragraph_negative(example, articles[example.title], rng)
            if built is not None:
                negatives.append(built)
                kind = negative_kind(built.id)
                assert kind is not None  # as_negative names every built negative's kind on its id
                counts.update({family} | {kind})  # a perturbation counts its own kind too
                break
    return [*examples, *negatives]


def split_by_article(examples: list[Example], held_out: int, seed: int = 0) -> tuple[list[Example], list[Example]]:
    """(training, held out): `held_out` whole articles drawn at random are held out, so that no held-out question
    shares a paragraph with a training one (for choosing a checkpoint without dev)."""
    titles = sorted({e.title for e in examples})
    chosen = set(random.Random(seed).sample(titles, min(held_out, len(titles))))
    return [e for e in examples if e.title not in chosen], [e for e in examples if e.title in chosen]


def squad_v2_document(examples: Iterable[Example]) -> dict:
    """The examples as a SQuAD v2.0 file: articles by title, paragraphs by context, is_impossible on every question."""
    articles: dict[str, dict[str, list[dict]]] = defaultdict(dict)
    for example in examples:
        articles[example.title].setdefault(example.passage, []).append({
            "id": example.id, "question": example.question, "is_impossible": example.is_impossible,
            "answers": [{"text": a.text, "answer_start": a.start_char} for a in example.answers]})
    return {"version": "v2.0", "data": [
        {"title": title, "paragraphs": [{"context": context, "qas": qas} for context, qas in paragraphs.items()]}
        for title, paragraphs in articles.items()]}


def _articles(examples: list[Example]) -> dict[str, Article]:
    found: dict[str, dict[str, None]] = defaultdict(dict)
    for example in examples:
        found[example.title][example.passage] = None
    return {title: Article.of(paragraphs) for title, paragraphs in found.items()}


def _entities_by_article(articles: dict[str, Article]) -> Callable[[str], tuple[NamedEntity, ...]]:
    """Each article's named entities (all its paragraphs), read by spaCy the first time they are asked for."""
    @functools.cache
    def entities(title: str) -> tuple[NamedEntity, ...]:
        return tuple(entity for found in named_entities(list(articles[title].paragraphs)) for entity in found)
    return entities


def _nouns_by_article(articles: dict[str, Article]) -> Callable[[str], tuple[WrittenWord, ...]]:
    """Each article's common nouns (all its paragraphs), tagged by spaCy the first time they are asked for."""
    @functools.cache
    def nouns(title: str) -> tuple[WrittenWord, ...]:
        return tuple(word for words in tagged_words(list(articles[title].paragraphs)) for word in words
                     if word.tag in NOUN_TAGS)
    return nouns
