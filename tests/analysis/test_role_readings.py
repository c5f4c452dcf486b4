"""The layer-role readings on a result built by hand (issue 61.5): the kind of word that leads the top-k, counted as the
roles chart stacks it (a supporting word the question shares is a supporting word), ties said as ties, the answer's
ceiling in the top-k where it binds, and the answer's share of the attribution that the heatmap shows. Every expected
sentence is worked out on paper from the lighthouse's scores (tests/analysis/hand_roles.py)."""
import pytest

from rcqa.figures import role_readings
from tests.analysis.hand_roles import LIGHTHOUSE, LIGHTHOUSE_QUESTION, MARGARET
from tests.helpers.handmade import handmade


@pytest.fixture(scope="module")
def readings() -> dict[str, str]:
    result = handmade(LIGHTHOUSE_QUESTION, LIGHTHOUSE, explained=(MARGARET, MARGARET + 1))
    return dict(role_readings(result, k=5))


def test_a_supporting_plurality_beside_an_answer_that_holds_most_of_the_attribution(readings):
    # block 0, the lighthouse's late layers: top-5 Margaret 34, Ellison 18, was 10, by 9, in 8: 3 supporting words
    # and the whole 2-word answer, which can fill no more than 2 of 5 places; the answer holds 34 + 18 = 52 % of the
    # layer, and is 2 of the passage's 13 words (15 %)
    assert readings["Middle (block 0)"] == (
        "mostly supporting words in the top-5 (answer 40%; supporting 60%; query 0%; other 0%): reading the context "
        "around the answer. The answer's 2 words can fill at most 40% of the top-5, and do so at 1 of 1 layer "
        "here; they are 15% of the passage's words and hold 52% of the layer's attribution.")


def test_a_supporting_word_the_question_shares_counts_as_supporting_so_a_level_count_is_a_tie(readings):
    # the embeddings: Margaret 30, Ellison 20, designed 15 (supporting+query), was 12 (supporting), board 11: two
    # answer words and two supporting words, one of them a question word. Counted as the chart stacks them, where
    # supporting+query sits on the supporting words' own stack, that is 40 % against 40 %: a tie, not "more answer
    # words than any other kind" as reading the supporting+query stack apart said
    assert readings["Early (embeddings)"] == (
        "answer and supporting words equally in the top-5 (answer 40%; supporting 40%, of which supporting+query "
        "20%; query 0%; other 20%): settling on and verifying the answer; reading the context around the answer. "
        "The answer's 2 words can fill at most 40% of the top-5, and do so at 1 of 1 layer here; they are 15% of "
        "the passage's words and hold 50% of the layer's attribution.")


def test_the_ceiling_is_said_only_where_the_answer_reaches_it(readings):
    # block 1: Margaret 25, was 20, by 15, board 12, 1872 10; Ellison (3) is not among them, so the answer fills 1 of
    # its 2 places: the ceiling does not bind, and is not said; the answer holds 25 + 3 = 28 %
    assert readings["Late (block 1)"] == (
        "mostly supporting words in the top-5 (answer 20%; supporting 60%; query 0%; other 20%): reading the context "
        "around the answer. The answer's 2 words are 15% of the passage's words and hold 28% of the layer's "
        "attribution.")
