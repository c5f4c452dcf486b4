"""Start and end apart: the view's setting, its link, and the numbers of its one job against independent ones — the
start logit explained alone (the single-target path), and IG's linearity (span_logits = start + end logit, so on the
same path points the joined target's attributions are the apart targets' sum)."""
import dataclasses

import numpy as np
import pytest

import rcqa
from rcqa import figures
from rcqa.attribution.cache import ResultCache
from rcqa.attribution.settings import PRESETS, FoilSpec
from rcqa.figures.whole_input import start_end, start_end_completeness, start_end_reading
from rcqa.gallery import gallery_example
from rcqa.types import AGGREGATIONS
from rcqa.ui import worker
from rcqa.ui.ends import explained_targets, refusal
from rcqa.ui.view import View, from_query, to_query, view_fields
from tests.helpers.views import view_with

FIXED = {"steps": 4, "tolerance": None}  # one fixed rule: the same path points whatever the targets


@pytest.fixture(scope="module")
def tiny(tiny_model_dirs):
    return rcqa.load_model(tiny_model_dirs["bert"])


@pytest.fixture(scope="module")
def comet():
    return gallery_example("comet-who")


def apart_job(tiny, comet, tmp_path, target: str, **settings):
    """The dashboard's explanation for a view with start and end apart: its settings, through the worker's job."""
    chosen = dataclasses.replace(view_with(target=target, ends="apart").settings(), **settings)
    request = worker.ExplanationRequest(comet, chosen)
    result, _, _ = worker.explanation(tiny, request, ResultCache(tmp_path), report=lambda _: None)
    return result


def test_apart_adds_the_start_and_end_logits_after_the_chosen_target_where_it_is_offered():
    assert View().settings().targets == ("span_log_prob",)  # joined: as before
    assert view_with(ends="apart").settings().targets == ("span_log_prob", "start_logit", "end_logit")
    assert view_with(target="start_logit", ends="apart").settings().targets == ("start_logit", "end_logit")
    for refused in (view_with(target="answer_vs_null", ends="apart"), view_with(target="null", ends="apart"),
                    view_with(contrast=FoilSpec("runner-up"), ends="apart")):
        assert refused.settings().targets == (refused.target,)  # a contrast adds its own target, first, in the engine
        assert refusal(refused.target, refused.contrast).count(".") == 1  # one sentence says why
    assert refusal("span_log_prob", None) is None


def test_apart_travels_in_a_link_and_an_unknown_value_is_refused_in_one_sentence():
    sent = view_with(example_id="comet-who", ends="apart", steps=5)
    query = to_query(sent)
    assert query["ends"] == "apart"
    received, problems = from_query(query)
    assert received == sent and problems == []
    assert from_query({"ends": "joined"})[0].ends == "joined"
    received, problems = from_query({"ends": "sideways"})
    assert received.ends == "joined"
    assert problems == ["Ignored ends='sideways' from the link: choose one of joined, apart."]


def test_a_view_gives_apart_settings_back_and_a_preset_leaves_the_setting_alone():
    for targets in (("span_log_prob", "start_logit", "end_logit"), ("start_logit", "end_logit")):
        settings = rcqa.ExplainSettings(targets=targets)
        assert view_fields(settings)["ends"] == "apart"
        assert View(**view_fields(settings)).settings() == settings
    for name, preset in PRESETS.items():  # a preset sets its settings and token score, not the ends or the windows
        chosen = view_with(ends="apart", windows="all", baseline="mask", aggregation="sum")
        chosen.apply(preset)
        assert (chosen.ends, chosen.windows, chosen.aggregation) == ("apart", "all", preset.aggregation), name
        expected = explained_targets(preset.settings.targets[0], "apart", None)
        assert chosen.settings() == dataclasses.replace(preset.settings, targets=expected, windows="all"), name


def test_the_start_target_in_the_apart_job_is_the_start_logit_explained_alone(tiny, comet, tmp_path):
    result = apart_job(tiny, comet, tmp_path, "span_log_prob", **FIXED)
    alone = rcqa.explain(tiny, comet.passage, comet.question, targets=["start_logit"], **FIXED)
    names = [target.name for target in result.targets]
    assert names == ["span_log_prob", "start_logit", "end_logit"]
    assert result.targets[1].span == alone.targets[0].span
    for aggregation in AGGREGATIONS:
        np.testing.assert_allclose(result.layer_scores(aggregation, target=1), alone.layer_scores(aggregation),
                                   rtol=1e-5, atol=1e-6)
    pair = [c for c in result.completeness if c.target == "start_logit"]
    np.testing.assert_allclose([c.attribution_sum for c in pair], [c.attribution_sum for c in alone.completeness],
                               rtol=1e-5, atol=1e-6)


def test_the_joined_span_logits_are_the_sum_of_the_apart_targets_on_the_same_path(tiny, comet, tmp_path):
    result = apart_job(tiny, comet, tmp_path, "span_logits", **FIXED)
    joined, start, end = (result.layer_scores("sum", target=t) for t in range(3))
    assert np.abs(joined).max() > 1e-3  # not trivially zero
    np.testing.assert_allclose(joined, start + end, rtol=1e-5, atol=1e-5)  # the signed sum is linear in the vector
    by_target = {name: [c for c in result.completeness if c.target == name]
                 for name in ("span_logits", "start_logit", "end_logit")}
    for layer, (both, alone_start, alone_end) in enumerate(zip(*by_target.values())):
        assert both.f_input == pytest.approx(alone_start.f_input + alone_end.f_input, abs=1e-5)
        assert both.attribution_sum == pytest.approx(alone_start.attribution_sum + alone_end.attribution_sum,
                                                     abs=1e-4)


def test_completeness_holds_for_each_target_of_the_adaptive_apart_job(tiny, comet, tmp_path):
    result = apart_job(tiny, comet, tmp_path, "span_log_prob")  # the default: adaptive to 1 % per layer
    tolerance = result.settings.tolerance
    for name in ("span_log_prob", "start_logit", "end_logit"):
        checks = [c for c in result.completeness if c.target == name]
        assert len(checks) == len(result.layers)
        assert max(c.relative_error for c in checks) <= tolerance
    worst = start_end_completeness(result)
    assert worst == {name: max(c.relative_error for c in result.completeness if c.target == name)
                     for name in ("start_logit", "end_logit")}


def test_the_reading_names_each_logits_top_word_and_the_layers_it_is_on_top_over(tiny, comet, tmp_path):
    result = apart_job(tiny, comet, tmp_path, "span_log_prob", **FIXED)
    chart = start_end(result, with_sum=False)
    assert [trace.type for trace in chart.figure.data] == ["heatmap", "heatmap"]
    last = result.layers[-1]
    start_scores = result.layer_scores("l2", target=1)[-1]  # a word's score: its word-pieces' summed (the paper)
    words = result.passage_words()  # punctuation is no word
    start_top = max(words, key=lambda w: start_scores[list(w.tokens)].sum()).text
    reading = start_end_reading(chart.data)
    assert f"“{start_top}”" in reading and reading.startswith(f"At the last layer ({last}) ")
    # the caveat it ends on: the QA head reads each token apart, so at the last layer a logit's attribution is all
    # on the word holding its own token
    assert reading.endswith(" At the last layer each logit rests on its own token by construction (the QA head "
                            "reads each token apart); the layers before it show where the model settles.")
    at_last = chart.data[chart.data.layer == chart.data.layer.max()].set_index("position")
    for target, column in ((result.targets[1], "start_share_pct"), (result.targets[2], "end_share_pct")):
        (own,) = [i for i, w in enumerate(words) if target.tokens[0 if column == "start_share_pct" else 1] in w.tokens]
        assert at_last[column].loc[own] == pytest.approx(100.0)


def test_the_reading_follows_made_up_shares_in_every_case(tiny, comet, tmp_path):
    data = start_end(apart_job(tiny, comet, tmp_path, "span_log_prob", **FIXED), with_sum=False).data.copy()
    data["start_share_pct"], data["end_share_pct"] = 0.0, 0.0
    layers = sorted(data.layer.unique())
    assert len(layers) >= 3  # the embeddings, a middle layer, the last
    positions = sorted(data.position.unique())
    label = dict(zip(data.layer, data.layer_label))
    word = dict(zip(data.position, data.word))
    middle, last = label[layers[1]], label[layers[-1]]

    def top(column: str, position_at: dict[int, int], share: float) -> None:
        for layer in layers:  # position_at: from which layer on (key) which word is on top (value)
            found = [position for since, position in sorted(position_at.items()) if layer >= layers[since]][-1]
            data.loc[(data.layer == layer), column] = 0.0
            data.loc[(data.layer == layer) & (data.position == positions[found]), column] = share

    caveat = (" At the last layer each logit rests on its own token by construction (the QA head reads each token "
              "apart); the layers before it show where the model settles.")
    one, two, three = (f"“{word[positions[i]]}”" for i in range(3))
    top("start_share_pct", {0: 0, 1: 1}, 70.0)  # the first word, then the second from the middle layer on
    top("end_share_pct", {0: 2}, 55.0)  # the third word throughout
    assert start_end_reading(data) == (
        f"At the last layer ({last}) the start logit rests most on {two} (70% of its attribution), the end logit on "
        f"{three} (55%). {two} is the start logit's top word from {middle} on, {three} the end logit's at every "
        f"layer." + caveat)
    top("end_share_pct", {0: 2, len(layers) - 1: 1}, 90.0)  # the end's top moves to the second word at the last
    assert start_end_reading(data) == (
        f"At the last layer ({last}) the start and the end logit both rest most on {two} (70% and 90% of their "
        f"attribution). It is the start logit's top word from {middle} on and the end logit's at the last layer "
        f"only." + caveat)
    top("end_share_pct", {0: 2, 1: 1}, 90.0)
    assert start_end_reading(data).startswith(
        f"At the last layer ({last}) the start and the end logit both rest most on {two} (70% and 90% of their "
        f"attribution). It is the top word of both from {middle} on.")
    top("start_share_pct", {0: 0}, 40.0)
    top("end_share_pct", {0: 0}, 100.0)
    assert start_end_reading(data) == (
        f"At the last layer ({last}) the start and the end logit both rest most on {one} (40% and 100% of their "
        f"attribution). It is the top word of both at every layer." + caveat)


def test_a_layer_that_does_not_add_up_is_warned_of_once_whatever_the_targets(tiny, comet, tmp_path):
    coarse = apart_job(tiny, comet, tmp_path, "span_log_prob", steps=1, tolerance=None)
    errors = np.array([[c.relative_error for c in coarse.completeness if c.target == name]
                       for name in ("span_log_prob", "start_logit", "end_logit")])  # targets × layers
    assert (errors > 0.05).any()
    flagged = [coarse.layers[layer] for layer in np.flatnonzero((errors > 0.05).any(axis=0))]
    assert figures.incomplete_layers(coarse, 0.05) == flagged  # before: each layer once per target


def test_attnlrp_explains_each_logit_alone_and_their_relevance_adds_up_to_span_logits(tiny, comet):
    # before: AttnLRP asked torch for the unused logit's gradient and failed on start_logit or end_logit alone
    result = rcqa.explain(tiny, comet.passage, comet.question, method="attnlrp",
                          targets=["span_logits", "start_logit", "end_logit"])
    joined, start, end = (result.layer_scores("sum", target=t) for t in range(3))
    assert np.abs(joined).max() > 1e-3
    np.testing.assert_allclose(joined, start + end, rtol=1e-5, atol=1e-5)  # its rules' backward is linear in F
    assert start_end(result, with_sum=False) is not None
