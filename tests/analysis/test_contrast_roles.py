"""What a contrast adds to the analyses: the foil's words as a category (on a result built by hand), and the lens's
margin of the span over the foil per layer (against the model's own hidden states, read by transformers)."""
import copy
from dataclasses import replace

import numpy as np
import pytest
import torch

from rcqa.analysis.report import analyses
from rcqa.analysis.roles.categories import boundary_contrast, category_labels, category_masks, word_categories
from rcqa.analysis.roles.shares import category_shares, other_number_share, quantifier_share
from rcqa.analysis.words import passage_distribution
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.figures.roles import roles
from rcqa.gallery import gallery_example
from rcqa.lens.contrast import contrast_margins, contrast_summary, margin_reading
from rcqa.qa import encode
from rcqa.types import Foil
from tests.helpers.handmade import handmade
from tests.helpers.orchard import PASSAGE, QUESTION, QUESTION_TEXT, SIX_HUNDRED, WORDS

TWO_HUNDRED_FIFTY = 17  # "250" among all passage words, punctuation included


@pytest.fixture
def contrasted():
    """The explanation of "600" against the foil "250"."""
    result = handmade(QUESTION, PASSAGE, explained=(SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)
    start = result.example.passage.index("250")
    result.targets[0] = replace(result.targets[0], name="contrast",
                                foil=Foil("distractor-number", "250", start, start + 3, 0, 0, 0, 0.0, None))
    return result


def test_the_foils_words_are_a_category(contrasted):
    masks = category_masks(contrasted)
    assert list(masks) == ["answer", "supporting", "query", "foil"]
    assert [WORDS[i] for i in np.flatnonzero(masks["foil"])] == ["250"]
    # "250" is 5 words after "600": a supporting word and the foil at once
    assert word_categories(contrasted)[WORDS.index("250")] == "supporting+foil"


def test_the_foils_share_of_each_layers_top_words(contrasted):
    shares = category_shares(contrasted, passage_distribution(contrasted), k=2)
    # embeddings: trees 5, pear 4 (query words); block 0: 600 6, 250 3; block 1: punctuation only, undefined
    assert shares["foil"][:2].tolist() == [0.0, 50.0] and np.isnan(shares["foil"][2])
    assert shares["answer"][:2].tolist() == [0.0, 50.0]
    found = analyses(contrasted, k=2)
    assert found["categories"]["foil"] == [0.0, 50.0, None] and found["category_labels"]["foil"] == "foil"
    from rcqa.figures import role_readings

    assert "foil 50%" in role_readings(contrasted, k=2)[1][1]


def test_other_numbers_are_the_top_words_tagged_cd_that_are_neither_the_answer_nor_the_foil(contrasted):
    distribution = passage_distribution(contrasted)
    # top-3 at the embeddings: trees 5, pear 4, trees 3 (no number); at block 0: 600 6 (the answer), 250 3 (the
    # foil), 14 2 (another number); block 1: punctuation only, undefined
    shares = other_number_share(contrasted, distribution, k=3)
    assert shares[:2].tolist() == pytest.approx([0.0, 100 / 3]) and np.isnan(shares[2])
    assert category_shares(contrasted, distribution, k=3)["foil"][1] == pytest.approx(100 / 3)
    plain = handmade(QUESTION, PASSAGE, explained=(SIX_HUNDRED, SIX_HUNDRED), question_text=QUESTION_TEXT)
    assert other_number_share(plain, passage_distribution(plain), k=3) is None  # no contrast, no foil


def test_the_roles_figure_counts_a_foil_word_once_as_foil(contrasted):
    chart = roles(contrasted, k=2)
    exclusive = chart.data[(chart.data.measure == "exclusive") & (chart.data.layer == 1)].set_index("category")
    assert exclusive.share_pct["foil"] == 50.0 and exclusive.share_pct["answer"] == 50.0
    assert exclusive.share_pct.sum() == pytest.approx(100.0)
    assert "foil = inside the foil “250”" in chart.figure.layout.title.subtitle.text
    assert "foil" in [trace.name for trace in chart.figure.data]


def test_a_null_foil_has_no_words(contrasted):
    contrasted.targets[0] = replace(contrasted.targets[0], foil=replace(contrasted.targets[0].foil, text="",
                                                                        start_char=None, end_char=None))
    assert "foil" not in category_masks(contrasted)
    assert other_number_share(contrasted, passage_distribution(contrasted), k=3) is None


@pytest.mark.parametrize("margins, reading", [
    ([-1.0, 0.5, 1.0, 3.0], "first beats the foil at block 0 (margin +0.50) and stays ahead from there "
                            "(margin +3.00 at the last layer); the margin grows most at block 2 (+2.00)."),
    ([-1.0, 0.5, -0.5, 2.0], "first beats the foil at block 0 (margin +0.50), falls behind again, and leads for "
                             "good from block 2 (margin +2.00 at the last layer); the margin grows most at block 2"),
    ([1.0, 0.5, -0.5, -1.0], "first beats the foil at embeddings (margin +1.00), but the foil leads again at the "
                             "last layer (margin -1.00 at the last layer)."),
    ([-1.0, -2.0, -0.5, -3.0], "the foil leads the answer at every layer (margin -3.00 at the last layer); the "
                               "margin grows most at block 1 (+1.50)."),
])
def test_the_lens_says_where_the_answer_first_beats_the_foil(margins, reading):
    assert reading in margin_reading(["embeddings", "block 0", "block 1", "block 2"], np.array(margins))


def test_the_lens_margin_is_the_heads_reading_of_the_models_own_hidden_states(tiny_bert):
    example = gallery_example("orchard-how-many")
    result = explain(tiny_bert, example, ExplainSettings(contrast="runner-up", tolerance=None, steps=2))
    chosen, foil = result.targets[0], result.targets[0].foil
    assert foil.window == result.window
    windows = encode(tiny_bert, example.question, example.passage)
    length = int(windows.inputs["attention_mask"][result.window].sum())
    reference = copy.deepcopy(tiny_bert.model)  # output_hidden_states leaves transformers' capture hooks installed
    with torch.no_grad():
        hidden = reference(**{k: v[result.window:result.window + 1, :length] for k, v in windows.inputs.items()},
                           output_hidden_states=True).hidden_states
        logits = [tiny_bert.model.qa_outputs(h)[0] for h in hidden]  # tokens × (start, end)
    expected = [float(x[chosen.start_token, 0] + x[chosen.end_token, 1] - x[foil.start_token, 0]
                      - x[foil.end_token, 1]) for x in logits]
    margins = contrast_margins(tiny_bert, result)
    assert margins.tolist() == pytest.approx(expected, abs=1e-4)
    top = [c for c in result.completeness if c.target == "contrast"][-1]
    assert margins[-1] == pytest.approx(top.f_input, abs=1e-4)  # the last layer's margin is the contrast's F
    summary = contrast_summary(tiny_bert, result)
    assert summary["explained_window"] == result.window and len(summary["completeness"]) == len(result.layers)
    with pytest.raises(ValueError, match="no contrast"):
        contrast_margins(tiny_bert, explain(tiny_bert, example, ExplainSettings(tolerance=None, steps=2)))


@pytest.mark.parametrize("margins, reading", [
    ([-1.0, 0.0, 0.5, 2.0], "On the lens the answer first beats the foil at block 1 (margin +0.50) and stays ahead from "
                            "there (margin +2.00 at the last layer); the margin grows most at block 2 (+1.50)."),
    ([1.0, 1.0, 0.5, 0.25], "On the lens the answer first beats the foil at embeddings (margin +1.00) and stays ahead "
                            "from there (margin +0.25 at the last layer)."),
    ([-1.0, -0.5, -0.25, -0.2], "On the lens the foil leads the answer at every layer (margin -0.20 at the last layer); "
                                "the margin grows most at block 0 (+0.50)."),
])
def test_a_tie_is_no_lead_and_a_margin_that_never_grows_is_not_said_to(margins, reading):
    assert margin_reading(["embeddings", "block 0", "block 1", "block 2"], np.array(margins)) == reading


def test_the_contrast_summary_is_the_contrasts_own(tiny_bert):
    result = explain(tiny_bert, gallery_example("orchard-how-many"),
                     ExplainSettings(contrast="runner-up", tolerance=None, steps=2))
    assert [t.name for t in result.targets] == ["contrast", "span_log_prob"]
    summary = contrast_summary(tiny_bert, result)
    checks = [c for c in result.completeness if c.target == "contrast"]
    assert summary["completeness"] == [c.relative_error for c in checks]
    assert summary["lens_margin"][-1] == pytest.approx(checks[-1].f_input, abs=1e-4)
    # the JSON keeps the margins to 6 decimals (enough for a logit, and short)
    assert summary["lens_margin"] == contrast_margins(tiny_bert, result).round(6).tolist()
    with pytest.raises(ValueError, match="'span_log_prob' is no contrast"):
        contrast_summary(tiny_bert, result, target=1)


@pytest.fixture
def boundary(contrasted):
    """The explanation of "600" against the foil "600 are pear trees", which holds it: a boundary contrast."""
    passage = contrasted.example.passage
    start = passage.index("600")
    contrasted.targets[0] = replace(contrasted.targets[0], foil=replace(
        contrasted.targets[0].foil, request="text:600 are pear trees", text="600 are pear trees", start_char=start,
        end_char=start + len("600 are pear trees")))
    return contrasted


def test_a_boundary_contrast_splits_the_two_spans_into_answer_only_foil_only_and_shared(boundary):
    masks = category_masks(boundary)
    assert list(masks) == ["answer", "supporting", "query", "foil", "shared"]
    assert not masks["answer"].any()  # the answer "600" lies wholly inside the foil
    assert [WORDS[i] for i in np.flatnonzero(masks["shared"])] == ["600"]
    assert [WORDS[i] for i in np.flatnonzero(masks["foil"])] == ["are", "pear", "trees"]
    categories = word_categories(boundary)
    assert categories[WORDS.index("600")] == "shared"
    assert categories[WORDS.index("pear")] == "supporting+query+foil"  # 2 words after "600", a question word
    assert category_labels(boundary) == {"answer": "answer only", "supporting": "supporting", "query": "query",
                                         "foil": "foil only", "shared": "shared (in the answer and the foil)"}
    assert boundary_contrast(boundary)


def test_a_boundary_contrasts_shares_of_each_layers_top_words(boundary):
    distribution = passage_distribution(boundary)
    # top-2 by hand: embeddings trees (the first, 5), pear (4, foil only); block 0: 600 (6, shared), 250 (3, a
    # supporting word outside both spans); block 1: punctuation only, undefined
    shares = category_shares(boundary, distribution, k=2)
    assert shares["shared"][:2].tolist() == [0.0, 50.0] and shares["foil"][:2].tolist() == [50.0, 0.0]
    assert shares["answer"][:2].tolist() == [0.0, 0.0] and np.isnan(shares["shared"][2])
    found = analyses(boundary, k=2)
    assert found["categories"]["shared"] == [0.0, 50.0, None]
    assert found["category_labels"]["shared"] == "shared (in the answer and the foil)"
    # the numbers: "600" is the explained span's whatever its category (1 of 4 numbers at block 0 is "250"), and
    # "250" lies outside both spans, so it is another number
    assert quantifier_share(boundary, distribution, k=2)[:2].tolist() == [0.0, 25.0]
    assert other_number_share(boundary, distribution, k=2)[:2].tolist() == [0.0, 50.0]
    from rcqa.figures import role_readings

    assert "shared 50%" in role_readings(boundary, k=2)[1][1]


def test_the_roles_figure_counts_a_word_of_both_spans_once_as_shared(boundary):
    chart = roles(boundary, k=2)
    exclusive = chart.data[chart.data.measure == "exclusive"]
    block0 = exclusive[exclusive.layer == 1].set_index("category").share_pct
    embeddings = exclusive[exclusive.layer == 0].set_index("category").share_pct
    assert (block0["shared"], block0["supporting"]) == (50.0, 50.0)
    assert (embeddings["foil"], embeddings["supporting+query"]) == (50.0, 50.0)
    subtitle = chart.figure.layout.title.subtitle.text
    assert "answer only = inside the explained span, not the foil" in subtitle
    assert "foil only = inside the foil “600 are pear trees”, not the answer" in subtitle and "shared = in both" in subtitle
    assert {"shared (in the answer and the foil)", "foil only"} <= {trace.name for trace in chart.figure.data}


def test_a_foil_clear_of_the_span_keeps_the_categories_as_they_were(contrasted):
    assert not boundary_contrast(contrasted) and "shared" not in category_labels(contrasted)
    assert "shared" not in [trace.name for trace in roles(contrasted, k=2).figure.data]


def test_a_contrasts_role_reading_counts_each_word_once_as_its_chart_stacks_it(contrasted):
    from rcqa.figures import role_readings

    # top-5 at the embeddings: trees, pear, trees (supporting and query words), 2,300 (supporting), has (other);
    # the paper's overlapping shares are supporting 80 % and query 60 %, 140 % in all: the reading lists each word
    # once, as the chart's stacks do, the supporting+query stack within the supporting words beside which it is drawn
    readings = dict(role_readings(contrasted, k=5))
    assert readings["Early (embeddings)"].startswith(
        "mostly supporting words in the top-5 (answer 0%; supporting 80%, of which supporting+query 60%; query 0%; "
        "foil 0%; other 20%): reading the context around the answer, mostly in words the question shares.")
    # block 0 has four top words, 600 (answer), 250 (foil, also within 5 words of 600), 14 (other), trees
    # (supporting and query)
    assert readings["Middle (block 0)"].startswith("answer, supporting, foil and other words equally in the top-5 "
                                                   "(answer 25%; supporting 25%, of which supporting+query 25%; "
                                                   "query 0%; foil 25%; other 25%)")
    chart = roles(contrasted, k=5).data
    stacks = chart[(chart.measure == "exclusive") & (chart.layer == 0)].set_index("category").share_pct
    assert stacks["supporting"] + stacks["supporting+query"] == 80 and stacks["other"] == 20
