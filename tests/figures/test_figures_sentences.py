"""The sentences beside the roles and interventions charts read the numbers those charts draw: each is parsed and
checked against the chart's own bars (tests/helpers/sentences.py), on results built by hand, where the numbers are
worked out on paper, and on the gallery's examples explained by the tiny model."""
import pytest

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures import knockout_reading, knockouts, role_readings, roles
from rcqa.gallery import gallery_example
from rcqa.lens.interventions import intervene
from tests.helpers.handmade import handmade
from tests.helpers.orchard import PASSAGE, QUESTION, QUESTION_TEXT, SIX_HUNDRED
from tests.helpers.sentences import check_knockout_reading, check_role_readings, legend_role


def chart_stacks(chart) -> dict[str, list[float]]:
    return {legend_role(trace.name): list(trace.y) for trace in chart.figure.data}


def test_the_roles_reading_counts_the_words_the_chart_stacks_as_supporting_and_query_under_that_name():
    # "600" explained; top-5 at the embeddings: trees 5, pear 4, trees 3 (within 5 words of 600 and in the question:
    # supporting+query), has 2 (other), 2,300 1 (supporting): 60 % supporting+query, which the chart draws, where
    # a reading of the first role alone said "supporting 80%, query 0%"; "600", 1 of the 17 words, scores 0 there
    result = handmade(QUESTION, PASSAGE, explained=(SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)
    readings = dict(role_readings(result, k=5))
    assert readings["Early (embeddings)"] == (
        "mostly supporting words in the top-5 (answer 0%; supporting 80%, of which supporting+query 60%; query 0%; "
        "other 20%): reading the context around the answer, mostly in words the question shares. The answer's 1 word "
        "is 6% of the passage's words and holds 0% of the layer's attribution.")
    chart = roles(result, k=5)
    check_role_readings(list(readings.items()), chart_stacks(chart), result.layers)


@pytest.fixture(scope="module")
def explained(tiny_bert):
    return {name: explain(tiny_bert, gallery_example(name), ExplainSettings(steps=4, tolerance=None))
            for name in ("orchard-how-many", "lighthouse-who", "bridge-how-much")}


@pytest.mark.parametrize("name", ["orchard-how-many", "lighthouse-who", "bridge-how-much"])
@pytest.mark.parametrize("k", [3, 5])
def test_every_roles_reading_is_its_charts_on_the_gallery(explained, name, k):
    result = explained[name]
    check_role_readings(role_readings(result, k=k), chart_stacks(roles(result, k=k)), result.layers)


def test_the_knock_out_reading_is_its_charts_on_the_gallery(explained, tiny_bert):
    for result in explained.values():
        chart = knockouts(intervene(tiny_bert, result, draws=2))
        bars = {trace.name: list(trace.y) for trace in chart.figure.data}
        against = [hover[2] for hover in chart.figure.data[0].customdata]  # the top-k bars' words against the span
        check_knockout_reading(knockout_reading(chart.data), bars, [a if a != "none" else "" for a in against])
