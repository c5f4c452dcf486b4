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


def test_a_source_questions_id_names_no_kind_and_an_empty_text_has_no_sentences():
    assert negative_kind("56be4db0acb8001400a502ec") is None and negative_kind("a1-neg-ctx") == "in_context"
    assert sentences("") == []


def test_in_context_takes_an_answer_at_the_first_character_and_only_sentences_it_overlaps():
    first = in_context_negative(example("q", "What was finished?", "The tower"))  # start_char 0
    assert first is not None and first.passage.startswith("It stands 300 metres")
    # an answer ending in the space before a sentence, or starting in the one after it, does not overlap it
    ends_in_space = Example("e", TOWER, "For what?", answers=(GoldAnswer("the fair. ", TOWER.index("the fair")),))
    assert in_context_negative(ends_in_space).passage.startswith("It stands 300 metres")
    starts_in_space = Example("s", TOWER, "How tall?", answers=(GoldAnswer(" It stands", TOWER.index(" It")),))
    assert in_context_negative(starts_in_space).passage == (
        "The tower was finished in 1889 for the fair. Visitors climb its stairs every day, and the lifts carry "
        "many more of them to the very top.")


def test_in_context_keeps_a_paragraph_left_with_exactly_the_fewest_words():
    rest = "One two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen."
    assert in_context_negative(example("q", "When?", "1889", passage="It was built in 1889. " + rest)).passage == rest
    assert in_context_negative(example("q", "When?", "1889", passage="It was built in 1889. " + rest.replace(
        " fifteen", ""))) is None  # fourteen words are too few


def test_other_paragraph_weighs_words_by_inverse_paragraph_frequency():
    import random

    # n = 4 paragraphs. "lantern" is in one (log 4/1 = 1.39); "keeper" and "shore" in three (log 4/3 = 0.29 each,
    # 0.58 for both); "the" in all four (0): the lantern's paragraph wins though it shares fewer words
    source = example("k", "Was the lantern or the keeper by the shore in 1889?", "1889",
                     passage="The keeper lit it in 1889 by the shore.", title="Coast")
    article = Article.of([source.passage, "The lantern is red.", "The keeper walks the shore.",
                          "The keeper and the shore."])
    assert other_paragraph_negative(source, article, random.Random(0)).passage == "The lantern is red."


IN_CONTEXT_CAPABLE = {"a1", "a2", "c1"}  # by hand: the other ARTICLE paragraphs keep under 15 words without the answer


def kinds_by_the_rule(order: list[str], wanted: int, quota: int) -> list[str]:
    """with_negatives' documented rule, by hand: in the drawn order, in-context first while fewer than the quota
    are, else other-paragraph (which every ARTICLE question can give: RIVER and STAIRS name no other's answer)."""
    kinds = []
    for source in order[:wanted]:
        in_context = kinds.count("in_context") < quota and source in IN_CONTEXT_CAPABLE
        kinds.append("in_context" if in_context else "other_paragraph")
    return kinds


@pytest.mark.parametrize("in_context", [0.0, 0.25, 0.5, 1.0])
@pytest.mark.parametrize("seed", [0, 1, 2, 16])  # 16 draws all three capable sources among the first four
def test_the_in_context_share_is_met_in_the_drawn_order_where_the_draw_allows(in_context, seed):
    assert {e.id for e in ARTICLE if in_context_negative(e)} == IN_CONTEXT_CAPABLE
    order = [ARTICLE[i].id for i in _shuffled(len(ARTICLE), seed)]
    negatives = with_negatives(ARTICLE, in_context=in_context, seed=seed)[len(ARTICLE):]
    assert [negative_kind(n.id) for n in negatives] == kinds_by_the_rule(order, 4, round(4 * in_context))
    assert [n.id.rsplit("-neg", 1)[0] for n in negatives] == order[:4]


def _shuffled(n: int, seed: int) -> list[int]:
    import random

    order = list(range(n))
    random.Random(seed).shuffle(order)  # with_negatives' draw: the standard library's, seeded
    return order


def test_negatives_come_from_answerable_sources_only_and_the_bounds_are_checked():
    unanswerable = Example("u1", RIVER, "Who painted the bridges?", title="Tower", is_impossible=True)
    ungraded = Example("t1", STAIRS, "Who climbed the stairs?", title="Tower")  # no gold answer, not impossible
    for seed in range(4):
        mixed = with_negatives([unanswerable, ungraded, *ARTICLE], seed=seed)
        assert len(mixed) == 15  # 10 questions, 5 negatives, all from ARTICLE's 8 answerable ones
        assert {n.id.rsplit("-neg", 1)[0] for n in mixed[10:]} <= {e.id for e in ARTICLE}
    assert with_negatives(ARTICLE, share=0.0) == ARTICLE
    for bad in ({"share": -0.1}, {"share": 1.0}, {"in_context": -0.1}, {"in_context": 1.5}):
        with pytest.raises(ValueError, match=r"^share must be in \[0, 1\) and in_context in \[0, 1\]$"):
            with_negatives(ARTICLE, **bad)


def test_the_held_out_articles_are_the_seeds_draw_and_the_file_says_v2():
    many = [example(f"q{i}", "When was the tower finished?", "1889", title=f"Article {i}") for i in range(20)]
    first, second = split_by_article(many, 10, seed=3), split_by_article(many, 10, seed=3)
    assert first == second  # 1 in 184,756 for two unseeded draws
    assert squad_v2_document(many)["version"] == "v2.0"
