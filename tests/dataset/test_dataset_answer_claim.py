"""The claim "Later layers settle on the answer" over runs written row by row (issue 61.5): it reads the answer's share
of each layer's attribution, as the heatmap shows it, with the answer's share of the top-k and the ceiling its word
count puts on that share beside it; a level share is a tie, not a rise; and a run whose rows predate the attribution
share cannot tell. Every number below is worked out by hand from the rows."""
import pytest

from rcqa.dataset.aggregate import load_run, summarize
from rcqa.dataset.conclusions import verdicts
from tests.helpers.hand_runs import row, write_run

CLAIM = "Later layers settle on the answer"


def answer_verdict(folder, rows):
    (found,) = [v for v in verdicts(summarize(load_run(write_run(folder, rows)))) if v.claim.startswith(CLAIM)]
    return found


def test_the_answer_settles_where_its_share_of_the_attribution_rises_while_its_top_k_share_sits_at_the_ceiling(
        tmp_path):
    # two 2-word answers, each filling its 2 places of every top-5 (40 %): the top-k share cannot rise; the answer's
    # share of the attribution does, from (10 + 30) / 2 = 20 % at the embeddings to (50 + 54) / 2 = 52 % at block 1
    rows = [row("a", answer=(40, 40, 40), answer_attribution=(10, 30, 50), answer_ceiling=(40, 40, 40)),
            row("b", answer=(40, 40, 40), answer_attribution=(30, 40, 54), answer_ceiling=(40, 40, 40))]
    found = answer_verdict(tmp_path / "run", rows)
    assert found.holds is True
    assert found.evidence == ("early layers 20.0%, late layers 52.0%; of the top-5: 40.0% and 40.0%, where its words "
                              "can fill at most 40.0% and 40.0%")


def test_a_top_k_share_that_rises_beside_a_level_attribution_share_does_not_settle_and_is_said_level(tmp_path):
    # a 1-word and a 3-word answer: the top-k share rises from (0 + 20) / 2 = 10 % to (20 + 60) / 2 = 40 %, but the
    # answer's share of the attribution is (20 + 40) / 2 = 30 % at the embeddings and (25 + 35) / 2 = 30 % at block 1
    rows = [row("a", answer=(0, 10, 20), answer_attribution=(20, 50, 25), answer_ceiling=(20, 20, 20)),
            row("b", answer=(20, 40, 60), answer_attribution=(40, 10, 35), answer_ceiling=(60, 60, 60))]
    found = answer_verdict(tmp_path / "run", rows)
    assert found.holds is False
    assert found.evidence == ("early layers 30.0%, late layers 30.0% (level); of the top-5: 10.0% and 40.0%, where "
                              "its words can fill at most 40.0% and 40.0%")


def test_a_run_whose_rows_predate_the_answers_attribution_share_cannot_tell(tmp_path):
    new = row("a", answer=(20, 30, 40), answer_attribution=(10, 30, 50), answer_ceiling=(40, 40, 40))
    old = row("b", answer=(40, 30, 20))  # written before the row held the attribution share: null there
    for name, rows in (("old", [old]), ("mixed", [new, old])):  # the newer rows alone are not the run
        found = answer_verdict(tmp_path / name, rows)
        assert found.holds is None, name
        assert found.evidence.startswith("undefined in this run: its rows predate the answer's share of the "
                                         "attribution (run it again); of the top-5: ")
    assert found.evidence.endswith("of the top-5: 30.0% and 30.0%")  # the mixed run: (20 + 40) / 2 at both ends


@pytest.mark.parametrize("late, holds", [(20.04, False), (20.06, True)])
def test_a_rise_is_judged_at_the_shown_tenth(tmp_path, late, holds):
    rows = [row("a", answer=(40, 40, 40), answer_attribution=(20, 20, late), answer_ceiling=(40, 40, 40))]
    assert answer_verdict(tmp_path / "run", rows).holds is holds
