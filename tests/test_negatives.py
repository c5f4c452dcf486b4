"""SQuAD 2.0-style unanswerable questions from SQuAD v1.1, on a hand-built article whose right negatives are
known."""
import json

import pytest

from rcqa.data import load_examples
from rcqa.negatives import (
    Article,
    holds_answer,
    in_context_negative,
    negative_kind,
    other_paragraph_negative,
    sentences,
    split_by_article,
    squad_v2_document,
    with_negatives,
)
from rcqa.types import Example, GoldAnswer

TOWER = ("The tower was finished in 1889 for the fair. It stands 300 metres tall over the river. "
         "Visitors climb its stairs every day, and the lifts carry many more of them to the very top.")
RIVER = "The river bends around the old town. Its bridges were built of stone in the middle ages by the guilds."
STAIRS = ("The stairs of the tower were painted again in the spring. The painters worked from the top down, "
          "and the work took the whole of the season.")
FAIR = "The fair of 1889 opened in May. It drew millions of visitors to the city and lasted until the autumn."


def example(id, question, answer, passage=TOWER, title="Tower"):
    return Example(id=id, passage=passage, question=question, title=title,
                   answers=(GoldAnswer(answer, passage.index(answer)),))


def test_sentences_break_after_end_marks_before_a_capital_or_digit():
    text = 'He said "Go." Then 3 left. It cost 2.5 dollars, e.g. a lot! Done'
    assert [text[s:e] for s, e in sentences(text)] == ['He said "Go."', "Then 3 left.",
                                                      "It cost 2.5 dollars, e.g. a lot!", "Done"]


def test_in_context_removes_the_answer_sentence_and_checks_nothing_is_left():
    negative = in_context_negative(example("q", "When was the tower finished?", "1889"))
    assert negative.passage == ("It stands 300 metres tall over the river. Visitors climb its stairs every day, "
                                "and the lifts carry many more of them to the very top.")
    assert negative.is_impossible and negative.answers == () and negative.id == "q-neg-ctx"
    # the answer repeated in a sentence that does not hold the gold position: it would remain, so no negative
    repeated = example("r", "How tall?", "300 metres", passage=TOWER + " Its 300 metres make it tall.")
    assert in_context_negative(repeated) is None
    # every gold answer's sentence goes (dev questions have several)
    two = Example("s", TOWER, "When and how tall?", answers=(GoldAnswer("1889", 26), GoldAnswer("300", 55)))
    assert in_context_negative(two).passage.startswith("Visitors climb")


def test_in_context_refuses_a_paragraph_left_too_short():
    assert in_context_negative(example("q", "How tall is it?", "300 metres", passage="It is 300 metres tall.")) is None


def test_other_paragraph_prefers_rare_shared_words_and_skips_paragraphs_holding_the_answer():
    import random

    article = Article.of([TOWER, RIVER, STAIRS, FAIR])
    # "stairs" and "tower" are rare in the article ("the" is everywhere, weight log(4/4) = 0); FAIR holds the
    # answer "1889" and is left out although it shares "1889"-free words
    question = example("q", "When were the tower stairs finished?", "1889")
    assert other_paragraph_negative(question, article, random.Random(0)).passage == STAIRS
    fair = example("f", "When was the fair?", "1889", passage=FAIR)
    assert other_paragraph_negative(fair, Article.of([TOWER, FAIR]), random.Random(0)) is None  # TOWER names it
    assert holds_answer("Down by THE 1889.", fair) and not holds_answer("in 18890", fair)


ARTICLE = [example("a1", "When was the tower finished?", "1889"),
           example("a2", "How tall does the tower stand?", "300 metres"),
           example("b1", "What were the bridges built of?", "stone", passage=RIVER),
           example("b2", "What does the river bend around?", "the old town", passage=RIVER),
           example("c1", "When were the stairs painted?", "in the spring", passage=STAIRS),
           example("c2", "Who worked from the top down?", "The painters", passage=STAIRS),
           example("d1", "When did the fair open?", "May", passage=FAIR),
           example("d2", "What did the fair draw to the city?", "millions of visitors", passage=FAIR)]


def test_about_a_third_are_unanswerable_and_no_negative_holds_an_answer():
    mixed = with_negatives(ARTICLE, seed=1)
    negatives = mixed[len(ARTICLE):]
    assert mixed[:len(ARTICLE)] == ARTICLE and len(negatives) == 4  # 4 / 12 = a third
    assert {negative_kind(n.id) for n in negatives} == {"in_context", "other_paragraph"}
    sources = {e.id: e for e in ARTICLE}
    for negative in negatives:
        source = sources[negative.id.rsplit("-neg", 1)[0]]
        assert negative.is_impossible and not negative.answers and negative.question == source.question
        assert not holds_answer(negative.passage, source)
    assert len({n.id for n in mixed}) == len(mixed)
    assert with_negatives(ARTICLE, seed=1) == mixed and with_negatives(ARTICLE, seed=2) != mixed
    assert len(with_negatives(ARTICLE, share=0.5)) == 16
    with pytest.raises(ValueError):
        with_negatives(ARTICLE, share=1.0)


def test_the_v2_file_reads_back_and_articles_are_held_out_whole(tmp_path):
    mixed = with_negatives(ARTICLE + [example("z1", "When?", "1889", title="Other")])
    path = tmp_path / "mixed.json"
    path.write_text(json.dumps(squad_v2_document(mixed)))
    assert sorted(load_examples(path), key=lambda e: e.id) == sorted(mixed, key=lambda e: e.id)
    training, held_out = split_by_article(mixed, 1, seed=0)
    assert len(training) + len(held_out) == len(mixed)
    assert not {e.title for e in training} & {e.title for e in held_out} and len({e.title for e in held_out}) == 1
