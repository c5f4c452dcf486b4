"""Contrastive targets, F = log p(span) − log p(foil): the foil each FOIL names, checked against passages and logits
built by hand; the contrast's linearity and completeness on the tiny model."""
import dataclasses
import json

import numpy as np
import pytest
import torch

import rcqa.attribution.contrast as contrast
import rcqa.qa
from rcqa.analysis.report import analyses
from rcqa.attribution import explanation
from rcqa.attribution.contrast import NoFoil, contrast_target, find_foil
from rcqa.attribution.explanation import explain
from rcqa.attribution.window import explained_window
from rcqa.attribution.settings import FoilSpec, ExplainSettings
from rcqa.attribution.targets import Target
from rcqa.gallery import gallery_example
from rcqa.qa import InputError, encode, logits as model_logits
from rcqa.types import Example, GoldAnswer

START = [1.0, 2.0, 0.5, -1.0]
END = [0.0, 1.0, 3.0, 2.5]


def test_the_contrast_is_the_span_logits_less_the_foils():
    start, end = torch.tensor([START]), torch.tensor([END])
    assert float(Target("contrast", 1, 2, foil_start_token=3, foil_end_token=3)(start, end)[0]) == \
        pytest.approx((2.0 + 3.0) - (-1.0 + 2.5))
    # a foil in another window: its score is a constant, whatever this window's logits
    assert float(Target("contrast", 1, 2, foil_score=4.0)(start, end)[0]) == pytest.approx(5.0 - 4.0)
    log_p = Target("span_log_prob", 1, 2)(start, end) - Target("span_log_prob", 3, 3)(start, end)
    assert float(Target("contrast", 1, 2, foil_start_token=3, foil_end_token=3)(start, end)[0]) == \
        pytest.approx(float(log_p[0]))  # the normalisers cancel


@pytest.mark.parametrize("foil, parsed", [("nbest:2", FoilSpec("nbest", rank=2)), ("gold", FoilSpec("gold")),
                                          ("null", FoilSpec("null")), ("text:the river", FoilSpec("text", text="the river")),
                                          ("text:a:b", FoilSpec("text", text="a:b")), ("runner-up", FoilSpec("runner-up")),
                                          ("distractor-number", FoilSpec("distractor-number"))])
def test_every_foil_form_parses_and_round_trips(foil, parsed):
    assert FoilSpec.parse(foil) == parsed and parsed.to_string() == foil
    assert ExplainSettings(contrast=foil).contrast == parsed and ExplainSettings(contrast=foil).to_dict()["contrast"] == foil


@pytest.mark.parametrize("foil", ["nbest:", "nbest:-1", "nbest:x", "nbest:99999", "text:", "text:  ", "best",
                                  "Gold", "text:" + "x" * 301])
def test_malformed_foils_are_refused_in_one_sentence(foil):
    with pytest.raises(ValueError, match="foil") as refused:
        ExplainSettings(contrast=foil)
    assert "\n" not in str(refused.value)


def test_the_contrast_is_left_out_of_settings_without_one_so_old_cache_keys_match():
    assert "contrast" not in ExplainSettings().to_dict()
    assert ExplainSettings.from_dict(ExplainSettings(contrast="gold").to_dict()).contrast == FoilSpec("gold")


QUANTITY = Example(id="q", passage="In 1990 the farm had 3 cats and 12 dogs.", question="How many dogs had the farm?",
                   answers=(GoldAnswer("12", 31),))


def tokens_at(windows, at: int, length: int) -> tuple[int, int]:
    """The first and last passage token of window 0 inside the characters [at, at + length)."""
    tokens = [t for t, (a, b) in enumerate(windows.offsets[0]) if windows.segments[0][t] == "passage"
              and a >= at and b <= at + length]
    return tokens[0], tokens[-1]


def hand_logits(windows, scores: dict[tuple[int, int], tuple[float, float]]) -> tuple[torch.Tensor, torch.Tensor]:
    """Logits that are zero but at the first and last token of each given characters [at, at + length): the
    (start, end) logit there."""
    start = torch.zeros(len(windows), windows.inputs["input_ids"].shape[1])
    end = start.clone()
    for (at, length), (first, last) in scores.items():
        first_token, last_token = tokens_at(windows, at, length)
        start[0, first_token], end[0, last_token] = first, last
    return start, end


def explained_at(windows, passage: str, text: str) -> tuple[int, int, int]:
    return 0, *tokens_at(windows, passage.index(text), len(text))


@pytest.mark.parametrize("scores, chosen", [({"3": (2.0, 2.0), "1990": (1.0, 1.0)}, "3"),
                                            ({"3": (2.0, 2.0), "1990": (1.0, 3.5)}, "1990")])
def test_the_distractor_number_is_the_best_scoring_other_number(tiny_bert, scores, chosen):
    windows = encode(tiny_bert, QUANTITY.question, QUANTITY.passage)
    passage = QUANTITY.passage
    logits = hand_logits(windows, {(passage.index(word), len(word)): value
                                   for word, value in {**scores, "12": (9.0, 9.0)}.items()})
    span = explained_at(windows, QUANTITY.passage, "12")
    foil = find_foil(FoilSpec.parse("distractor-number"), logits, QUANTITY, None, windows, span)
    assert (foil.text, foil.start_char, foil.window) == (chosen, QUANTITY.passage.index(chosen), 0)
    assert foil.score == pytest.approx(sum(scores[chosen]))


def test_a_question_without_a_distractor_number_is_skipped_with_its_reason(tiny_bert):
    other = Example(id="w", passage=QUANTITY.passage, question="What did the farm have?")
    windows = encode(tiny_bert, other.question, other.passage)
    with pytest.raises(NoFoil, match="not a quantifier question"):
        find_foil(FoilSpec.parse("distractor-number"), hand_logits(windows, {}), other, None, windows,
                  explained_at(windows, other.passage, "12"))
    lone = Example(id="l", passage="The farm had 12 dogs and some cats.", question="How many dogs?")
    windows = encode(tiny_bert, lone.question, lone.passage)
    with pytest.raises(NoFoil, match="no number besides"):
        find_foil(FoilSpec.parse("distractor-number"), hand_logits(windows, {}), lone, None, windows,
                  explained_at(windows, lone.passage, "12"))


def test_a_text_foil_is_matched_as_written_and_its_best_place_taken(tiny_bert):
    example = Example(id="t", passage="cats and dogs , cats or dogs", question="What?")
    windows = encode(tiny_bert, example.question, example.passage)
    second = example.passage.index("cats", 1)
    logits = hand_logits(windows, {(second, 4): (1.5, 0.5), (0, 4): (0.5, -0.5)})  # the second "cats" wins
    span = explained_at(windows, example.passage, "dogs")
    foil = find_foil(FoilSpec.parse("text:cats"), logits, example, None, windows, span)
    assert (foil.text, foil.start_char, foil.score) == ("cats", second, pytest.approx(2.0))
    with pytest.raises(InputError, match="does not occur in the passage as written"):
        find_foil(FoilSpec.parse("text:Cats"), logits, example, None, windows, span)
    # a text inside the explained span is a boundary contrast ("or" against "cats or"); the span itself is refused
    inside = find_foil(FoilSpec.parse("text:or"), logits, example, None, windows, explained_at(windows, example.passage, "cats or"))
    assert (inside.text, inside.start_char) == ("or", example.passage.index("or"))
    with pytest.raises(InputError, match="occurs only as the explained span itself"):
        find_foil(FoilSpec.parse("text:cats or"), logits, example, None, windows, explained_at(windows, example.passage, "cats or"))


def test_a_text_foil_must_start_and_end_at_token_boundaries(tiny_bert):
    example = gallery_example("river-where")
    explained = explained_window(tiny_bert, example)
    inside_a_word = "elta"  # "Velta" is one word, so "elta" starts inside a word-piece or a word
    with pytest.raises(InputError, match="inside a word-piece"):
        find_foil(FoilSpec.parse(f"text:{inside_a_word}"), explained.logits, example, explained.answer, explained.windows, explained.span)


def test_a_foil_equal_to_the_span_and_a_missing_one_are_refused(tiny_bert):
    example = gallery_example("river-where")
    explained = explained_window(tiny_bert, example)
    best = explained.answer.best
    with pytest.raises(InputError, match="is the explained span itself"):
        find_foil(FoilSpec.parse("nbest:0"), explained.logits, example, explained.answer, explained.windows, explained.span)
    with pytest.raises(InputError, match="occurs only as the explained span itself"):
        find_foil(FoilSpec.parse(f"text:{best.text}"), explained.logits, example, explained.answer, explained.windows, explained.span)
    gold_is_the_answer = Example(id="g", passage=example.passage, question=example.question,
                                 answers=(GoldAnswer(best.text, best.start_char),))
    with pytest.raises(InputError, match="is the explained span itself"):
        find_foil(FoilSpec.parse("gold"), explained.logits, gold_is_the_answer, explained.answer, explained.windows, explained.span)
    with pytest.raises(InputError, match="only 20 candidate spans"):
        find_foil(FoilSpec.parse("nbest:20"), explained.logits, example, explained.answer, explained.windows, explained.span)
    with pytest.raises(InputError, match="no gold answer"):
        find_foil(FoilSpec.parse("gold"), explained.logits, Example(id="x", passage=example.passage, question=example.question),
                  explained.answer, explained.windows, explained.span)


def test_the_runner_up_is_the_best_span_clear_of_the_answer(tiny_bert):
    example = gallery_example("river-where")
    explained = explained_window(tiny_bert, example)
    answer = explained.answer
    foil = find_foil(FoilSpec.parse("runner-up"), explained.logits, example, answer, explained.windows, explained.span)
    clear = [s for s in answer.nbest if s.end_char <= answer.best.start_char or s.start_char >= answer.best.end_char]
    assert (foil.text, foil.probability, foil.score) == (clear[0].text, clear[0].probability, clear[0].score)


def test_null_is_no_answer_where_its_score_is_smallest(tiny_bert):
    example = gallery_example("comet-who")
    explained = explained_window(tiny_bert, example, allow_null=True)
    foil = find_foil(FoilSpec.parse("null"), explained.logits, example, explained.answer, explained.windows, explained.span)
    null = explained.answer.no_answer
    assert (foil.start_char, foil.window, foil.start_token, foil.end_token) == (None, null.window, 0, 0)
    assert (foil.score, foil.probability) == (pytest.approx(null.score, abs=1e-5), null.probability)


def test_the_contrast_is_the_difference_of_the_two_span_targets_by_linearity(tiny_bert):
    # IG is linear in F: with the same path points, the contrast's signed scores are the span's less the foil's
    example = gallery_example("river-where")
    fixed = {"tolerance": None, "steps": 16}
    result = explain(tiny_bert, example, ExplainSettings(targets=("span_logits",), contrast="runner-up", **fixed))
    foil = result.targets[0].foil
    assert [t.name for t in result.targets] == ["contrast", "span_logits"] and foil.window == result.window
    rank = next(i for i, s in enumerate(result.answer.nbest) if s.text == foil.text)
    at_foil = explain(tiny_bert, example, ExplainSettings(targets=("span_logits",), span=f"nbest:{rank}", **fixed))
    difference = result.layer_scores("sum", 1) - at_foil.layer_scores("sum", 0)
    assert np.abs(result.layer_scores("sum", 0) - difference).max() <= 1e-6
    best = result.answer.best
    top = [c for c in result.completeness if c.target == "contrast"][-1]
    assert top.f_input == pytest.approx(best.score - foil.score, abs=1e-4)


@pytest.mark.parametrize("rule, limit", [("gausslegendre", 0.01), ("riemann_right", 0.05),
                                         ("paper_trapezoid", 0.2)])  # the paper's fixed 20 points are coarse
def test_the_contrast_is_complete_at_every_layer(tiny_bert, rule, limit):
    settings = ExplainSettings(contrast="runner-up", rule=rule,
                          **({} if rule == "gausslegendre" else {"steps": 50, "tolerance": None}))
    result = explain(tiny_bert, gallery_example("orchard-how-many"), settings)
    checks = [c for c in result.completeness if c.target == "contrast"]
    assert [c.layer for c in checks] == list(range(len(result.layers)))
    assert max(c.relative_error for c in checks) <= limit
    # what the check sums is the contrast's scores, and F(input) is the two spans' logit margin at every layer
    np.testing.assert_allclose([c.attribution_sum for c in checks], result.layer_scores("sum", 0).sum(1),
                               rtol=1e-5, atol=1e-6)
    margin = result.answer.best.score - result.targets[0].foil.score
    assert [c.f_input for c in checks] == pytest.approx([margin] * len(checks), abs=1e-4)


def test_a_foil_in_another_window_leaves_the_answers_logit_target_alone(tiny_bert):
    # the foil's logits do not depend on the explained window's states, so the contrast's attributions are the
    # span logits' own, and its F is theirs less a constant
    passage = " ".join(["Upstream, the Anfang spring feeds it."]
                       + ["The Velta rises in the Morrow Hills and flows east to the sea at Halden."] * 8
                       + ["Far downstream, the old mill at Kessel grinds corn."])
    example = Example(id="long", passage=passage, question="Where does the Velta rise?")
    explained = explained_window(tiny_bert, example)
    assert explained.answer.n_windows > 1
    # a word only the first window reads, or only the last, whichever the explained window is not
    word = "Kessel" if explained.window < explained.answer.n_windows - 1 else "Anfang"
    far = find_foil(FoilSpec.parse(f"text:{word}"), explained.logits, example, explained.answer, explained.windows, explained.span)
    assert far.window != explained.window
    fixed = {"tolerance": None, "steps": 8}
    both = explain(tiny_bert, example, ExplainSettings(targets=("span_logits",), contrast=f"text:{word}", **fixed))
    foil = both.targets[0].foil
    recorded = both.targets[0].to_dict()["foil"]
    assert (foil.window, recorded["explained_window"], recorded["in_explained_window"]) == (far.window, both.window,
                                                                                           False)
    assert (both.targets[0].foil_start_token, both.targets[0].foil_score) == (None, pytest.approx(far.score))
    np.testing.assert_allclose(both.scores[0], both.scores[1], rtol=1e-6, atol=1e-7)
    pairs = zip([c for c in both.completeness if c.target == "contrast"],
                [c for c in both.completeness if c.target == "span_logits"])
    for contrasted, alone in pairs:
        assert contrasted.f_input == pytest.approx(alone.f_input - far.score, abs=1e-4)
        assert contrasted.delta == pytest.approx(alone.delta, abs=1e-4)


def test_the_contrast_target_reads_the_foil_in_the_window_or_as_a_constant():
    foil = contrast.Foil("nbest:1", "x", 0, 1, 2, 5, 6, 3.5, 0.1)
    assert contrast_target(foil, 2, 1, 1) == Target("contrast", 1, 1, foil_start_token=5, foil_end_token=6)
    assert contrast_target(foil, 0, 1, 1) == Target("contrast", 1, 1, foil_score=3.5)


def test_the_python_api_takes_the_contrast_as_a_setting(tiny_model_dirs):
    import rcqa

    example = gallery_example("river-where")
    result = rcqa.explain(tiny_model_dirs["bert"], example.passage, example.question, contrast="runner-up",
                          tolerance=None, steps=2)
    assert [t.name for t in result.targets] == ["contrast", "span_log_prob"]
    assert result.settings.contrast == FoilSpec("runner-up")


def test_explain_contrast_on_the_command_line_writes_the_foil_and_refuses_an_overlap(tiny_model_dirs, tmp_path,
                                                                                     capsys):
    import json

    from rcqa.cli import main

    example = gallery_example("river-where")
    passage = tmp_path / "passage.txt"
    passage.write_text(example.passage)
    out = tmp_path / "out.json"
    common = ["explain", "--passage-file", str(passage), "--question", example.question, "--model",
              tiny_model_dirs["bert"], "--no-cache", "--tolerance", "0", "--steps", "2", "--json", str(out)]
    assert main([*common, "--contrast", "runner-up"]) == 0
    document = json.loads(out.read_text())
    contrast_part = document["contrast"]
    assert contrast_part["foil"] == document["targets"][0]["foil"] and document["analyses"]["target"] == "contrast"
    assert len(contrast_part["lens_margin"]) == len(contrast_part["completeness"]) == len(document["layers"])
    assert contrast_part["lens_reading"].startswith("On the lens") and "foil" in document["analyses"]["categories"]
    capsys.readouterr()
    assert main([*common, "--contrast", "nbest:0"]) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "is the explained span itself" in error[0]


def test_a_foil_two_windows_hold_is_read_in_the_explained_one(tiny_bert):
    passage = " ".join(f"w{i}" for i in range(150))
    example = Example(id="overlap", passage=passage, question="Which one?")
    windows = encode(tiny_bert, example.question, passage)
    assert len(windows) > 1

    def tokens_in(window: int) -> dict[int, int]:  # passage character → its token, in one window
        return {a: t for t, (a, _) in enumerate(windows.offsets[window]) if windows.segments[window][t] == "passage"}

    first, second = tokens_in(0), tokens_in(1)
    shared = sorted(set(first) & set(second))
    word = passage[shared[len(shared) // 2]:].split(" ", 1)[0]  # a word from the middle of the overlap
    at = passage.index(f" {word} ") + 1
    last = {w: max(tokens_in(w).values()) for w in (0, 1)}
    for window in (0, 1):  # explain each window's own last token: the foil is placed in that same window
        foil = find_foil(FoilSpec.parse(f"text:{word}"), model_logits(tiny_bert, windows), example, None, windows,
                         (window, last[window], last[window]))
        assert (foil.window, foil.start_char) == (window, at)


def test_a_runner_up_past_the_nbest_list_is_searched_for(tiny_bert):
    from rcqa.types import Answer, Span

    example = Example(id="r", passage="cats and dogs , cats or dogs", question="What?")
    windows = encode(tiny_bert, example.question, example.passage)
    span = explained_at(windows, example.passage, "dogs")
    at = example.passage.index("or")
    logits = hand_logits(windows, {(at, 2): (3.0, 2.0), (example.passage.index("dogs"), 4): (9.0, 9.0)})
    dogs = Span("dogs", 9, 13, span[1], span[2], 0, 9.0, 9.0, 0.9)
    only_the_answer = Answer(question=example.question, nbest=(dogs,), n_windows=1)
    foil = find_foil(FoilSpec.parse("runner-up"), logits, example, only_the_answer, windows, span)
    assert (foil.text, foil.start_char, foil.score) == ("or", at, pytest.approx(5.0))


@pytest.mark.parametrize("foil, windows", [("runner-up", "answer"), ("null", "answer"), ("text:Halden", "answer"),
                                           ("text:Halden", "all")])
def test_a_contrast_runs_no_window_through_the_model_again(tiny_bert, foil, windows):
    # the foil is scored on the logits the answer was decoded from: the windows that reach the embeddings are the
    # answer's forward over all N of them and each explained window's stack and baseline, with a contrast as
    # without one
    qa_model = dataclasses.replace(tiny_bert, max_len=40, doc_stride=8)  # a passage of several windows
    example = gallery_example("river-where")
    rows = []
    hook = qa_model.model.base_model.embeddings.register_forward_hook(lambda module, args, out: rows.append(len(out)))
    try:
        fixed = {"tolerance": None, "steps": 2, "windows": windows}
        contrasted = explanation.explain(qa_model, example, ExplainSettings(contrast=foil, **fixed))
        with_contrast = sum(rows)
        rows.clear()
        explanation.explain(qa_model, example, ExplainSettings(**fixed))
    finally:
        hook.remove()
    n = contrasted.answer.n_windows
    assert n > 1 and contrasted.targets[0].name == "contrast"
    assert with_contrast == sum(rows) == n + 2 * (n if windows == "all" else 1)


def test_the_foil_is_found_on_the_logits_the_answer_was_decoded_from(tiny_bert, monkeypatch):
    # hand-planted logits in place of the model's: the answer ("dogs") and the foil (the second "cats", at the
    # score planted there) are both read from them, whatever the model itself would say
    example = Example(id="t", passage="cats and dogs , cats or dogs", question="What?")
    second = example.passage.index("cats", 1)
    planted = {(9, 4): (9.0, 9.0), (second, 4): (1.5, 0.5), (0, 4): (0.5, -0.5)}
    monkeypatch.setattr(rcqa.qa, "logits", lambda qa_model, windows: hand_logits(windows, planted))
    result = explain(tiny_bert, example, ExplainSettings(contrast="text:cats", tolerance=None, steps=2))
    foil = result.targets[0].foil
    assert result.answer.best.text == "dogs" and result.answer.best.start_char == 9
    assert (foil.text, foil.start_char, foil.score) == ("cats", second, pytest.approx(2.0))


def test_a_null_foil_is_read_in_the_window_of_the_smallest_planted_null_score(tiny_bert, monkeypatch):
    qa_model = dataclasses.replace(tiny_bert, max_len=32, doc_stride=8)
    example = Example(id="n", passage=" ".join(f"w{i}" for i in range(60)), question="Which one?")

    def planted(qa_model, windows):  # [CLS]'s start logit N, N − 1, …, 1, but −4 in the second window
        start = torch.zeros(len(windows), windows.inputs["input_ids"].shape[1])
        start[:, 0] = torch.arange(len(windows), 0, -1, dtype=torch.float)
        start[1, 0] = -4.0
        return start, torch.zeros_like(start)

    monkeypatch.setattr(rcqa.qa, "logits", planted)
    result = explanation.explain(qa_model, example, ExplainSettings(contrast="null", windows="all", tolerance=None,
                                                               steps=2))
    foil = result.targets[0].foil
    assert result.answer.n_windows > 2 and (foil.window, foil.score, foil.start_char) == (1, -4.0, None)
def test_a_runner_up_in_the_nbest_list_is_taken_from_it_without_another_model_pass(tiny_bert, monkeypatch):
    from rcqa.types import Answer, Span

    example = Example(id="r", passage="cats and dogs , cats or dogs", question="What?")
    windows = encode(tiny_bert, example.question, example.passage)
    span = explained_at(windows, example.passage, "dogs")
    cats = tokens_at(windows, 0, 4)
    nbest = (Span("dogs", 9, 13, span[1], span[2], 0, 9.0, 9.0, 0.9),
             Span("and dogs", 5, 13, span[1] - 1, span[2], 0, 4.0, 9.0, 0.06),  # overlaps the answer
             Span("cats", 0, 4, *cats, 0, 3.0, 1.0, 0.03))

    def no_model_pass(*args):
        raise AssertionError("the n-best list holds a runner-up: the model must not run again")

    monkeypatch.setattr(contrast, "decode", no_model_pass)
    foil = find_foil(FoilSpec.parse("runner-up"), hand_logits(windows, {}), example, Answer(example.question, nbest, 1), windows, span)
    assert (foil.request, foil.text, foil.start_char, foil.end_char) == ("runner-up", "cats", 0, 4)
    assert (foil.window, foil.start_token, foil.end_token) == (0, *cats)
    assert (foil.score, foil.probability) == (pytest.approx(4.0), 0.03)


def test_no_runner_up_where_every_answer_overlaps_the_explained_one(tiny_bert):
    example = Example(id="one", passage="Velta", question="Which river?")  # every span answers the one word
    explained = explained_window(tiny_bert, example)
    with pytest.raises(NoFoil, match="none of the 200 most probable answers stays clear of the explained span"):
        find_foil(FoilSpec.parse("runner-up"), explained.logits, example, explained.answer, explained.windows, explained.span)


@pytest.mark.parametrize("best", [0, 1, 2])
def test_a_text_foil_is_looked_for_at_every_place_it_occurs(tiny_bert, best):
    example = Example(id="t", passage="cats and dogs , cats or dogs , cats too", question="What?")
    windows = encode(tiny_bert, example.question, example.passage)
    places = [0, 16, 31]  # the three "cats"
    logits = hand_logits(windows, {(at, 4): (2.0 if i == best else 0.5, 1.0) for i, at in enumerate(places)})
    foil = find_foil(FoilSpec.parse("text:cats"), logits, example, None, windows, explained_at(windows, example.passage, "dogs"))
    assert (foil.start_char, foil.end_char, foil.score) == (places[best], places[best] + 4, pytest.approx(3.0))


def test_overlapping_places_of_a_text_foil_are_each_a_candidate(tiny_bert):
    example = Example(id="o", passage="dogs and aaa", question="What?")  # "aaa" is a ##a ##a: "aa" starts at 9 and 10
    windows = encode(tiny_bert, example.question, example.passage)
    logits = hand_logits(windows, {(9, 2): (0.5, 0.5), (10, 2): (1.5, 1.0)})
    foil = find_foil(FoilSpec.parse("text:aa"), logits, example, None, windows, explained_at(windows, example.passage, "dogs"))
    assert (foil.start_char, foil.end_char, foil.score) == (10, 12, pytest.approx(2.5))


def test_the_runner_up_search_reaches_past_the_first_twenty_answers(tiny_bert):
    from rcqa.types import Answer, Span

    # 30 answers "the … the Velta" score 9 and all overlap "Velta"; "or" (4) is the first answer clear of it
    example = Example(id="r", passage="or " + " ".join(["the"] * 40) + " Velta", question="What?")
    windows = encode(tiny_bert, example.question, example.passage)
    velta = example.passage.index("Velta")
    logits = hand_logits(windows, {(0, 2): (2.0, 2.0), (velta, 5): (0.0, 9.0)})
    span = explained_at(windows, example.passage, "Velta")
    only_the_answer = Answer(example.question, (Span("Velta", velta, velta + 5, span[1], span[2], 0, 0.0, 9.0, 0.1),),
                             n_windows=1)
    foil = find_foil(FoilSpec.parse("runner-up"), logits, example, only_the_answer, windows, span)
    assert (foil.text, foil.start_char, foil.score) == ("or", 0, pytest.approx(4.0))


def test_a_gold_answer_at_the_first_character_is_a_foil(tiny_bert):
    example = Example(id="g", passage="cats and dogs , cats or dogs", question="What?", answers=(GoldAnswer("cats", 0),))
    windows = encode(tiny_bert, example.question, example.passage)
    logits = hand_logits(windows, {(0, 4): (1.0, 0.25)})
    foil = find_foil(FoilSpec.parse("gold"), logits, example, None, windows, explained_at(windows, example.passage, "dogs"))
    assert (foil.request, foil.text, foil.start_char, foil.end_char, foil.score) == ("gold", "cats", 0, 4,
                                                                                  pytest.approx(1.25))


def test_a_foil_that_no_window_holds_is_refused_in_one_sentence(tiny_bert):
    example = Example(id="g", passage="cats and dogs", question="What?", answers=(GoldAnswer("birds", 500),))
    windows = encode(tiny_bert, example.question, example.passage)
    logits = hand_logits(windows, {})
    span = explained_at(windows, example.passage, "dogs")
    with pytest.raises(InputError, match="^the gold answer does not fit in any window of the passage$"):
        find_foil(FoilSpec.parse("gold"), logits, example, None, windows, span)
    long = "birds " * 20  # the message quotes the first 60 characters only
    with pytest.raises(InputError) as refused:
        find_foil(FoilSpec.parse(f"text:{long}"), logits, example, None, windows, span)
    assert str(refused.value) == (f"{long[:60]!r} does not occur in the passage as written (the match is exact, "
                                  f"case included)")
    cut = Example(id="w", passage=f"cats and {long}dogs", question="What?")
    cut_windows = encode(tiny_bert, cut.question, cut.passage)
    with pytest.raises(InputError) as refused:
        find_foil(FoilSpec.parse(f"text:ats and {long}"), hand_logits(cut_windows, {}), cut, None, cut_windows,
                  explained_at(cut_windows, cut.passage, "dogs"))
    assert str(refused.value).startswith(f"{('ats and ' + long)[:60]!r} starts or ends inside a word-piece")


def test_the_reasons_a_foil_is_missing_are_whole_sentences(tiny_bert):
    windows = encode(tiny_bert, QUANTITY.question, QUANTITY.passage)
    logits = hand_logits(windows, {})
    span = explained_at(windows, QUANTITY.passage, "12")
    other = Example(id="w", passage=QUANTITY.passage, question="What did the farm have?")
    with pytest.raises(NoFoil, match="^not a quantifier question \\(no 'how many' / 'how much'\\): it has no "
                                     "distractor number$"):
        find_foil(FoilSpec.parse("distractor-number"), logits, other, None, windows, span)
    lone = Example(id="l", passage="In the farm there were 12 dogs.", question="How many dogs?")
    lone_windows = encode(tiny_bert, lone.question, lone.passage)
    with pytest.raises(NoFoil, match="^the passage has no number besides the explained span$"):
        find_foil(FoilSpec.parse("distractor-number"), hand_logits(lone_windows, {}), lone, None, lone_windows, explained_at(lone_windows, lone.passage,
                                                                                         "12"))
    with pytest.raises(InputError, match="^this example has no gold answer with a position in the passage$"):
        find_foil(FoilSpec.parse("gold"), logits, Example(id="n", passage=QUANTITY.passage, question="How?"), None,
                  windows, span)


def test_a_null_foil_has_no_probability_when_the_answer_was_decoded_without_it(tiny_bert):
    example = gallery_example("comet-who")
    explained = explained_window(tiny_bert, example, allow_null=False)
    assert explained.answer.no_answer is None
    foil = find_foil(FoilSpec.parse("null"), explained.logits, example, explained.answer, explained.windows, explained.span)
    assert (foil.request, foil.text, foil.start_char, foil.end_char, foil.probability) == ("null", "", None, None,
                                                                                          None)
    start, end = model_logits(tiny_bert, explained.windows)
    assert foil.score == pytest.approx(float((start[:, 0] + end[:, 0]).min()))  # run_squad: the least null score


def test_a_text_foils_probability_is_its_standing_among_the_answers(tiny_bert):
    example = gallery_example("river-where")
    explained = explained_window(tiny_bert, example)
    passage, best = example.passage, explained.answer.best
    other = next(s for s in explained.answer.nbest[1:] if not s.overlaps(best.start_char, best.end_char)
                 and passage.count(s.text) == 1)
    foil = find_foil(FoilSpec.parse(f"text:{other.text}"), explained.logits, example, explained.answer, explained.windows, explained.span)
    assert (foil.request, foil.start_char, foil.end_char) == (f"text:{other.text}", other.start_char, other.end_char)
    assert (foil.score, foil.probability) == (pytest.approx(other.score, abs=1e-5),
                                              pytest.approx(other.probability, rel=1e-5))


def test_a_foil_equal_to_the_span_is_refused_naming_it(tiny_bert):
    example = gallery_example("river-where")
    explained = explained_window(tiny_bert, example)
    best = explained.answer.best
    with pytest.raises(InputError) as refused:
        find_foil(FoilSpec.parse("nbest:0"), explained.logits, example, explained.answer, explained.windows, explained.span)
    assert str(refused.value) == (f"the foil {best.text!r} (nbest:0) is the explained span itself; a contrast needs "
                                  "two different spans")


def test_a_distractor_number_that_no_window_holds_is_refused_in_one_sentence(tiny_bert):
    # windows over the passage's first words only, as where a passage was cut: its other numbers lie past them
    example = Example(id="c", passage="There were 12 dogs , 3 cats and 5 hens .", question="How many dogs were there?")
    windows = encode(tiny_bert, example.question, example.passage[:18])
    with pytest.raises(InputError, match="^no other number of the passage fits in a window$"):
        find_foil(FoilSpec.parse("distractor-number"), hand_logits(windows, {}), example, None, windows,
                  explained_at(windows, example.passage, "12"))


def test_a_contrast_sharing_a_token_reads_only_the_ends_that_differ():
    start, end = torch.tensor([START]), torch.tensor([END])
    # span (1, 2) against foil (1, 3): the start logits cancel, F = end[2] − end[3] = 3.0 − 2.5
    assert float(Target("contrast", 1, 2, foil_start_token=1, foil_end_token=3)(start, end)[0]) == pytest.approx(0.5)


def overlapping_rank(answer) -> int:
    """The first n-best rank whose span overlaps the best one without being it."""
    best = answer.best
    return next(rank for rank, span in enumerate(answer.nbest) if span.overlaps(best.start_char, best.end_char)
                and (span.start_char, span.end_char) != (best.start_char, best.end_char))


def test_a_boundary_contrast_is_found_and_complete_at_every_layer(tiny_bert):
    example = gallery_example("orchard-how-many")
    explained = explained_window(tiny_bert, example)
    rank = overlapping_rank(explained.answer)
    other = explained.answer.nbest[rank]
    foil = find_foil(FoilSpec.parse(f"nbest:{rank}"), explained.logits, example, explained.answer, explained.windows, explained.span)
    assert (foil.start_char, foil.end_char, foil.score) == (other.start_char, other.end_char,
                                                            pytest.approx(other.score))
    result = explain(tiny_bert, example, ExplainSettings(contrast=f"nbest:{rank}"))  # adaptive Gauss–Legendre to 1 %
    checks = [c for c in result.completeness if c.target == "contrast"]
    assert len(checks) == len(result.layers) and max(c.relative_error for c in checks) <= 0.01
    margin = explained.answer.best.score - other.score  # log p(A) − log p(B): the two spans' logit sums
    assert [c.f_input for c in checks] == pytest.approx([margin] * len(checks), abs=1e-4)
    assert "shared" in analyses(result)["category_labels"]


def test_a_boundary_contrast_on_the_command_line_says_so_in_its_json(tiny_bert, tiny_model_dirs, tmp_path):
    from rcqa.cli import main

    example = gallery_example("orchard-how-many")
    rank = overlapping_rank(explained_window(tiny_bert, example).answer)
    passage, out = tmp_path / "passage.txt", tmp_path / "out.json"
    passage.write_text(example.passage)
    assert main(["explain", "--passage-file", str(passage), "--question", example.question, "--model",
                 tiny_model_dirs["bert"], "--no-cache", "--tolerance", "0", "--steps", "2", "--json", str(out),
                 "--contrast", f"nbest:{rank}"]) == 0
    document = json.loads(out.read_text())
    assert document["contrast"]["boundary"] is True
    labels = document["analyses"]["category_labels"]
    assert (labels["answer"], labels["foil"], labels["shared"]) == ("answer only", "foil only",
                                                                    "shared (in the answer and the foil)")
    assert len(document["analyses"]["categories"]["shared"]) == len(document["layers"])
