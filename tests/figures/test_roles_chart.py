"""The roles chart draws what its reading says (issue 61.5): beside the stacked top-k bars, the answer's ceiling in the
top-k and the answer's share of each layer's attribution, which is the heatmap's shares summed over the answer's
words; and each reading, parsed, agrees with the chart's own traces (tests/helpers/sentences.py)."""
from dataclasses import replace

import numpy as np
import pytest

from rcqa.figures import heatmap, role_readings, roles
from rcqa.types import Foil
from tests.analysis.hand_roles import LIGHTHOUSE, LIGHTHOUSE_QUESTION, MARGARET
from tests.helpers.handmade import handmade
from tests.helpers.orchard import PASSAGE as ORCHARD
from tests.helpers.orchard import QUESTION as ORCHARD_QUESTION
from tests.helpers.orchard import QUESTION_TEXT, SIX_HUNDRED
from tests.helpers.sentences import check_role_readings, legend_role


@pytest.fixture(scope="module")
def lighthouse():
    return handmade(LIGHTHOUSE_QUESTION, LIGHTHOUSE, explained=(MARGARET, MARGARET + 1))


@pytest.fixture(scope="module")
def asked():
    """The lighthouse explaining "lighthouse was designed": two of its words are the question's (answer+query)."""
    return handmade(LIGHTHOUSE_QUESTION, LIGHTHOUSE, explained=(1, 3))


@pytest.fixture(scope="module")
def orchard():
    return handmade(ORCHARD_QUESTION, ORCHARD, explained=(SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)


def traces(chart) -> dict[str, list[float]]:
    return {legend_role(trace.name): list(trace.y) for trace in chart.figure.data}


def test_the_chart_draws_the_answers_ceiling_and_its_share_of_the_attribution(lighthouse, orchard):
    drawn = traces(roles(lighthouse, k=5))
    # "Margaret Ellison", 2 words of a top-5 at every layer; it holds 30 + 20, 34 + 18 and 25 + 3 of each 100
    assert drawn["answer's ceiling: its 2 words of 5"] == [40, 40, 40]
    assert drawn["answer's share of the layer's attribution"] == pytest.approx([50, 52, 28])
    # the orchard's "600": 1 word, of a top-5 at the embeddings and of the 4 words block 0 scores; block 1 scores
    # only punctuation, so it has neither top words nor attribution
    drawn = traces(roles(orchard, k=5))
    assert drawn["answer's ceiling: its 1 word of 5"][:2] == [20, 25]
    assert np.isnan(drawn["answer's ceiling: its 1 word of 5"][2])
    assert drawn["answer's share of the layer's attribution"][:2] == pytest.approx([0, 600 / 12.5])


def test_a_two_role_stack_is_drawn_in_the_legend_group_of_its_first_role(lighthouse):
    groups = {trace.name: trace.legendgroup for trace in roles(lighthouse, k=5).figure.data if trace.type == "bar"}
    assert groups == {"answer": "answer", "answer+query": "answer", "supporting": "supporting",
                      "supporting+query": "supporting", "query": "query", "other": "other"}


@pytest.mark.parametrize("k", [2, 3, 5])
def test_the_answers_share_of_the_attribution_is_the_heatmaps_over_its_words(lighthouse, asked, orchard, k):
    for result in (lighthouse, asked, orchard):
        cells = heatmap(result).data
        answer_cells = cells[cells.category.str.split("+").map(lambda kinds: "answer" in kinds)]
        summed = answer_cells.groupby("layer").share_pct.sum().to_numpy()
        drawn = traces(roles(result, k=k))["answer's share of the layer's attribution"]
        defined = ~np.isnan(drawn)
        assert np.allclose(np.asarray(drawn)[defined], summed[defined]) and not summed[~defined].any()


@pytest.mark.parametrize("k", [1, 2, 3, 5])
def test_every_reading_agrees_with_its_charts_traces(lighthouse, asked, orchard, k):
    for result in (lighthouse, asked, orchard):
        check_role_readings(role_readings(result, k=k), traces(roles(result, k=k)), result.layers)


def test_an_answer_wholly_inside_its_foil_has_no_line_and_no_sentence(orchard):
    # "600" against the foil "600 are pear trees": every word of the answer is shared with the foil, none is the
    # answer's alone, so there is no ceiling or share of the answer's own words to draw or say
    start = orchard.example.passage.index("600")
    foil = Foil("text:600 are pear trees", "600 are pear trees", start, start + 18, 0, 0, 0, 0.0, None)
    boundary = replace(orchard, targets=[replace(orchard.targets[0], name="contrast", foil=foil)])
    drawn = traces(roles(boundary, k=2))
    assert not [name for name in drawn if "ceiling" in name or "attribution" in name]
    readings = role_readings(boundary, k=2)
    assert not [text for _, text in readings if "answer's" in text]
    check_role_readings(readings, drawn, boundary.layers)
