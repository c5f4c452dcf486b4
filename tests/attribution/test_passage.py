"""Whole-passage explanations: the merge rule by hand, today's scores on one window, the joint target's completeness
and gradient against a direct all-windows forward of the model."""
import dataclasses
import time

import numpy as np
import pytest
import torch

from rcqa.attribution.window import baseline_stack, explained_window, window_inputs
from rcqa.attribution.explanation import explain
from rcqa.attribution.layerwise import IntegratedGradients
from rcqa.attribution.passage import PassageLayout, PassagePath, WindowProgress
from rcqa.attribution.progress import explained_fraction
from rcqa.attribution.settings import ExplainSettings
from rcqa.attribution.stack import LayerStack
from rcqa.attribution.targets import Target
from rcqa.gallery import gallery_example
from rcqa.qa import encode
from rcqa.spans import Windows
from rcqa.types import AGGREGATIONS, Attribution
from tests.helpers.reference import layer_module
from rcqa.figures.common import axis_words

CLS, SEP, Q = 101, 102, 7


def hand_windows() -> Windows:
    """[CLS] q [SEP] p… [SEP] over a passage of 6 tokens p0…p5 (token k holds characters 2k, 2k + 1), cut into
    three windows of 3 passage tokens with an overlap of 1 and 2: p0 p1 p2 | p2 p3 p4 | p3 p4 p5."""
    passage = [[0, 1, 2], [2, 3, 4], [3, 4, 5]]
    ids = [[CLS, Q, SEP, *(200 + k for k in window), SEP] for window in passage]
    offsets = [[(0, 0), (0, 1), (0, 0), *((2 * k, 2 * k + 1) for k in window), (0, 0)] for window in passage]
    segments = [["special", "question", "special", "passage", "passage", "passage", "special"]] * 3
    inputs = {"input_ids": torch.tensor(ids), "attention_mask": torch.ones(3, 7, dtype=torch.long)}
    return Windows(inputs=inputs, offsets=offsets, passage_mask=torch.tensor([[s == "passage" for s in w]
                                                                            for w in segments]),
                   segments=segments, question="q")


def test_the_layout_of_three_hand_built_windows():
    layout = PassageLayout.of(hand_windows())
    assert layout.ids == (CLS, Q, SEP, 200, 201, 202, 203, 204, 205, SEP)
    assert layout.segments[3:9] == ("passage",) * 6 and layout.offsets[5] == (4, 5)
    assert layout.positions == ((0, 1, 2, 3, 4, 5, 9), (0, 1, 2, 5, 6, 7, 9), (0, 1, 2, 6, 7, 8, 9))


def test_the_merge_adds_every_copy_and_takes_l2_over_them_all():
    layout = PassageLayout.of(hand_windows())
    # one target; per aggregation, the three windows' 7 tokens each
    per_window = np.zeros((1, len(AGGREGATIONS), 21))
    l2, total = AGGREGATIONS.index("l2"), AGGREGATIONS.index("sum")
    per_window[0, l2] = [1, 3, 0, 1, 1, 2, 0,   1, 4, 0, 2, 1, 1, 0,   1, 12, 0, 2, 2, 2, 5]
    per_window[0, total] = [1, -3, 0, 1, 1, 2, 0,   -1, 4, 0, 2, 1, 1, 0,   1, 12, 0, 2, 2, 2, 5]
    merged = layout.merge(per_window)
    # [CLS] in all three: 1,1,1; q: 3,4,12; p2 in windows 0 and 1: 2, 2; p3 in 1 and 2: 1, 2; p4: 1, 2
    assert np.allclose(merged[0, l2], [np.sqrt(3), 13, 0, 1, 1, np.sqrt(8), np.sqrt(5), np.sqrt(5), 2, 5])
    assert np.allclose(merged[0, total], [1, 13, 0, 1, 1, 4, 3, 3, 2, 5])
    assert np.isclose(merged[0, total].sum(), per_window[0, total].sum())  # nothing is dropped


def few_windows(qa_model, max_len=40, doc_stride=8):
    return dataclasses.replace(qa_model, max_len=max_len, doc_stride=doc_stride)


@pytest.mark.parametrize("targets", [("span_log_prob",), ("span_logits", "null", "answer_vs_null")])
def test_a_one_window_passage_gives_todays_scores(tiny_bert, targets):
    example = gallery_example("comet-who")
    settings = ExplainSettings(targets=targets)
    today = explain(tiny_bert, example, settings)
    whole = explain(tiny_bert, example, dataclasses.replace(settings, windows="all"))
    assert whole.answer.n_windows == 1 and whole.settings.windows == "all"
    assert whole.tokens == today.tokens and whole.words == today.words and whole.targets[0].start_token == \
        today.targets[0].start_token
    assert np.allclose(whole.scores, today.scores, rtol=1e-6, atol=1e-6)
    assert [c.relative_error for c in whole.completeness] == pytest.approx([c.relative_error for c in
                                                                           today.completeness], abs=1e-6)
    # the result says what it explains as today's does: model, targets, settings, the states kept
    assert (whole.model, whole.fingerprint, whole.window, whole.layers) == (today.model, today.fingerprint,
                                                                            today.window, today.layers)
    # beside today's fields the whole passage names the null's window for a target that reads it
    assert [dataclasses.replace(t, null_window=None) for t in whole.targets] == today.targets
    assert [t.window for t in whole.targets] == [today.window] * len(targets)
    assert [t.null_window for t in whole.targets] == [0 if t.null_token is not None else None for t in today.targets]
    assert dataclasses.replace(whole.settings, windows="answer") == today.settings
    assert (whole.windowing.max_len, whole.windowing.doc_stride) == (today.windowing.max_len,
                                                                    today.windowing.doc_stride)
    assert (whole.windowing.n_windows, today.windowing.n_windows) == (1, None)
    assert whole.hidden_states.dtype == today.hidden_states.dtype == np.float32
    assert np.allclose(whole.hidden_states, today.hidden_states, atol=1e-6)


def test_the_joint_target_is_complete_at_every_layer_of_a_long_passage(tiny_bert):
    qa_model = few_windows(tiny_bert)
    example = gallery_example("bridge-how-much")
    reports = []
    wall = time.perf_counter()
    result = explain(qa_model, example, ExplainSettings(windows="all"), on_layer=reports.append)
    wall = time.perf_counter() - wall
    windows = result.answer.n_windows
    assert windows == 4 and result.windowing.windows_read == (0, 1, 2, 3)
    assert all(c.relative_error <= 0.01 for c in result.completeness)
    for c in result.completeness:  # the windows' sums add up to the checked total, and every window carries F
        assert len(c.window_sums) == windows and sum(c.window_sums) == pytest.approx(c.attribution_sum, abs=1e-5)
        assert all(abs(s) > 0 for s in c.window_sums)
    # the merged signed sums still add up to F(input) - F(baseline): no copy is dropped
    assert np.allclose(result.layer_scores("sum").sum(1), [c.delta for c in result.completeness], rtol=0.011)
    # the whole passage's words, each once, in text order
    passage_words = [w for w in result.words if w.segment == "passage"]
    assert [w.start_char for w in passage_words] == sorted({w.start_char for w in passage_words})
    assert passage_words[-1].end_char == len(example.passage.rstrip())
    layers = [r for r in reports if not isinstance(r, WindowProgress)]
    assert [r.layer for r in layers] == list(range(len(result.layers)))
    assert {r.window for r in reports if isinstance(r, WindowProgress)} == set(range(1, windows + 1))
    done = -1  # each window's progress names the layer under way, and comes before that layer's result
    for report in reports:
        if isinstance(report, WindowProgress):
            assert (report.layer, report.label, report.windows) == (done + 1, result.layers[done + 1], windows)
        else:
            done = report.layer
    # the bar's fraction never goes back, moves within the first layer, and ends full
    expected = IntegratedGradients().path_points(result.settings, qa_model.num_layers)
    fractions = [explained_fraction(r, qa_model.num_layers, expected) for r in reports]
    assert fractions == sorted(fractions) and 0 < fractions[0] and fractions[-1] == pytest.approx(1.0)
    assert "pass 1, " in reports[0].describe(expected) and "window 1 of 4" in reports[0].describe(expected)
    assert 0 < sum(r.seconds for r in layers) <= result.seconds < wall
    round_trip = Attribution.from_dict(result.to_dict())
    assert round_trip.completeness == result.completeness and round_trip.windowing.n_windows == windows


def test_a_whole_passage_layer_refined_in_several_passes_counts_its_passes_and_points(tiny_bert):
    # the adaptive rule refines a layer in passes, each over every window: the progress heard counts the passes up
    # and the path points on, never from window 1 again at zero, and ends each layer at the points its check spent
    reports = []
    result = explain(few_windows(tiny_bert), gallery_example("bridge-how-much"),
                     ExplainSettings(windows="all", steps=2, tolerance=1e-6, max_steps=16), on_layer=reports.append)
    for layer, check in enumerate(result.completeness):
        heard = [r for r in reports if isinstance(r, WindowProgress) and r.layer == layer]
        assert [r.points for r in heard] == sorted(r.points for r in heard)
        assert [r.path_pass for r in heard] == sorted(r.path_pass for r in heard) and heard[0].path_pass == 1
        assert heard[-1].points == check.steps
    assert max(r.path_pass for r in reports if isinstance(r, WindowProgress)) > 1  # refined: its passes are shown


def test_the_joint_paths_ends_are_every_windows_own_logits_and_take_no_forward(tiny_bert, monkeypatch):
    qa_model = few_windows(tiny_bert)
    example = gallery_example("bridge-how-much")
    run_from, rows = LayerStack.run_from, []
    monkeypatch.setattr(LayerStack, "run_from", lambda self, layer, hidden: (rows.append(len(hidden)),
                                                                             run_from(self, layer, hidden))[1])
    result = explain(qa_model, example, ExplainSettings(windows="all", tolerance=None, steps=4))
    assert sum(rows) == len(result.layers) * 4 * len(result.windowing.windows_read)  # the gradients' points only
    windows = encode(qa_model, example.question, example.passage)
    lengths = windows.inputs["attention_mask"].sum(1).tolist()
    special = torch.isin(windows.inputs["input_ids"], torch.tensor(qa_model.tokenizer.all_special_ids))
    pad = {**windows.inputs, "input_ids": windows.inputs["input_ids"].masked_fill(~special, 0)}
    explained = explained_window(qa_model, example)
    before = sum(lengths[:explained.window])  # the span's tokens among every window's, laid end to end
    target = Target("span_log_prob", before + explained.start_token, before + explained.end_token)
    with torch.no_grad():  # the model itself on every window at once, padded as the decoder runs them
        def f(inputs) -> float:
            output = qa_model.model(**inputs)
            start = torch.cat([output.start_logits[w, :n] for w, n in enumerate(lengths)])[None]
            end = torch.cat([output.end_logits[w, :n] for w, n in enumerate(lengths)])[None]
            return float(target(start, end)[0])

        at_input, at_pad = f(windows.inputs), f(pad)
    assert [c.f_input for c in result.completeness] == pytest.approx([at_input] * len(result.layers), abs=1e-4)
    assert [c.f_baseline for c in result.completeness] == pytest.approx([at_pad] * len(result.layers), abs=1e-4)


@pytest.mark.parametrize("target", ["span_logits", "end_logit"])  # end_logit: a gradient on the end logits only
def test_a_target_of_one_window_leaves_the_other_windows_alone(tiny_bert, target):
    qa_model = few_windows(tiny_bert)
    example = gallery_example("bridge-how-much")
    settings = ExplainSettings(targets=(target,), tolerance=None)
    whole = explain(qa_model, example, dataclasses.replace(settings, windows="all"))
    window = explain(qa_model, example, settings)
    assert whole.windowing.windows_read == (window.window,)
    # the answer's window's tokens keep their one-window scores; every other passage token scores 0
    offsets = {o: i for i, (o, s) in enumerate(zip(whole.token_offsets, whole.token_segments)) if s == "passage"}
    mine = [offsets[o] for o, s in zip(window.token_offsets, window.token_segments) if s == "passage"]
    assert np.allclose(whole.scores[..., mine], window.scores[..., [i for i, s in enumerate(window.token_segments)
                                                                     if s == "passage"]], rtol=1e-5, atol=1e-7)
    others = sorted(set(offsets.values()) - set(mine))
    assert others and not whole.scores[..., others].any()


def reference_gradients(qa_model, windows, layer, points, target):
    """∇F at each point by autograd through the Hugging Face model itself, run on every window at once (padded, as
    the decoder runs them), with the layer's output swapped for the path point by a forward hook."""
    lengths = windows.inputs["attention_mask"].sum(1).tolist()
    padded = torch.zeros(len(lengths), max(lengths), points[0][0].shape[-1])
    gradients = []
    for point in points:
        for w, state in enumerate(point):
            padded[w, :lengths[w]] = state[0]
        hidden = padded.clone().requires_grad_(True)
        handle = layer_module(qa_model.model, layer).register_forward_hook(lambda m, a, out: hidden)
        try:
            output = qa_model.model(**windows.inputs)
        finally:
            handle.remove()
        start = torch.cat([output.start_logits[w, :n] for w, n in enumerate(lengths)])[None]
        end = torch.cat([output.end_logits[w, :n] for w, n in enumerate(lengths)])[None]
        (gradient,) = torch.autograd.grad(target(start, end).sum(), hidden)
        gradients.append(torch.cat([gradient[w, :n] for w, n in enumerate(lengths)]))
    return torch.stack(gradients)


@pytest.mark.parametrize("memory_budget_mb", [1, 1024])  # 1 MB: one window's graph at a time, the others rerun
@pytest.mark.parametrize("name", ["span_log_prob", "paper_confidence"])
def test_the_joint_gradient_equals_autograd_through_every_window(tiny_bert, memory_budget_mb, name):
    qa_model = few_windows(tiny_bert)
    example = gallery_example("comet-who")
    windows = encode(qa_model, example.question, example.passage)
    stacks = [LayerStack(qa_model.model, window_inputs(windows, w)) for w in range(len(windows))]
    bounds = np.cumsum([0, *(s.start_logits.shape[1] for s in stacks)])
    target = Target(name, int(bounds[1]) + 12, int(bounds[1]) + 14)  # a span of the middle window
    layer, alphas = 2, np.array([0.3, 0.8])
    path = PassagePath(stacks, [None] * len(stacks), layer, [target], list(range(len(stacks))), memory_budget_mb)
    ours = path.gradients(alphas, np.eye(2))[0, :, 0]  # sums × tokens × dim: one sum per point
    points = [[a * s.hidden[layer] for s in stacks] for a in alphas]
    reference = reference_gradients(qa_model, windows, layer, points, target)
    assert len(stacks) == 3
    assert float((ours - reference).abs().max() / reference.abs().max()) <= 1e-4
    assert ours[:, :bounds[1]].abs().max() > 0  # the first window's tokens bear on the middle window's span


def test_windows_is_a_checked_setting_left_out_of_old_cache_keys():
    assert "windows" not in ExplainSettings().to_dict()
    assert ExplainSettings.from_dict({"windows": "all"}).to_dict()["windows"] == "all"
    with pytest.raises(ValueError, match="windows"):
        ExplainSettings(windows="every")


def test_explain_windows_all_on_the_command_line(capsys, tmp_path, tiny_model_dirs):
    import json

    from rcqa.cli import main

    example = gallery_example("bridge-how-much")
    passage = tmp_path / "passage.txt"
    passage.write_text(" ".join([gallery_example(name).passage for name in ("comet-who", "river-where")]
                                + [example.passage]))
    out = tmp_path / "whole.json"
    status = main(["explain", "--passage-file", str(passage), "--question", example.question, "--windows", "all",
                   "--model", tiny_model_dirs["bert"], "--json", str(out), "--no-cache", "--max-steps", "16"])
    err = capsys.readouterr().err
    document = json.loads(out.read_text())
    windows = document["answer"]["n_windows"]
    assert status == 0 and windows >= 2 and document["settings"]["windows"] == "all"
    assert f"over {windows} windows" in err
    assert all(len(c["window_sums"]) == windows for c in document["completeness"])
    assert document["words"][-1]["end_char"] == len(passage.read_text().rstrip())
    assert document["analyses"]  # the analyses run over the whole passage unchanged


def test_the_heatmap_of_a_3000_word_passage_pages_around_the_span():
    from dataclasses import replace

    from rcqa.figures.words import PAGE_WORDS, heatmap
    from tests.helpers.handmade import handmade

    words = [(f"w{i}", "NN", [float(i % 7), 1.0]) for i in range(3000)]
    result = handmade([("what", "WP")], words, explained=(2000, 2001))
    result = replace(result, settings=ExplainSettings(windows="all"),
                     answer=replace(result.answer, n_windows=24))
    figure = heatmap(result).figure
    axis = figure.layout.xaxis
    assert len(axis_words(axis)) == 3000 and axis.rangeslider.visible
    first, last = axis.range
    assert last - first == PAGE_WORDS and first < 2000 < last  # a page of words around the explained span
    assert "whole passage, 24 windows" in figure.layout.title.subtitle.text


@pytest.mark.parametrize("allow_null", [True, False])
def test_the_null_is_read_in_the_window_the_decoder_takes_it_from(tiny_bert, allow_null):
    from rcqa.qa import logits

    qa_model = few_windows(tiny_bert)
    example = gallery_example("bridge-how-much")
    result = explain(qa_model, example, ExplainSettings(targets=("null",), windows="all", allow_null=allow_null,
                                                   tolerance=None, steps=4))
    start, end = logits(qa_model, encode(qa_model, example.question, example.passage))
    smallest = int((start[:, 0] + end[:, 0]).argmin())  # run_squad: the null score of the window where it is least
    assert result.targets[0].null_window == smallest
    if allow_null:
        assert result.answer.no_answer.window == smallest
    assert len(set((start[:, 0] + end[:, 0]).tolist())) > 1  # the windows' null scores differ: the choice matters
    # F is log p(start = [CLS]) + log p(end = [CLS]) of that window, each softmax over every window's tokens
    lengths = encode(qa_model, example.question, example.passage).inputs["attention_mask"].sum(1).tolist()
    laid = [torch.cat([side[w, :n] for w, n in enumerate(lengths)]) for side in (start, end)]
    cls = sum(lengths[:smallest])
    expected = float(sum(torch.log_softmax(side, 0)[cls] for side in laid))
    assert smallest > 0 and [c.f_input for c in result.completeness] == pytest.approx([expected] * len(result.layers),
                                                                                      abs=1e-4)


def test_the_passage_benchmark_measures_both_sides(tiny_model_dirs):
    from rcqa.bench import passage as bench

    sides = {side: bench.passage_side(tiny_model_dirs["bert"], "cpu", None, 3, ExplainSettings(steps=2).to_dict(), side)
             for side in bench.PASSAGE_SIDES}
    assert all(side["seconds"] > 0 and side["cpu_seconds"] > 0 and side["steps"] > 0 for side in sides.values())
    # the tiny model's 4 layers (3 blocks), at least 2 points each; one after another: every window's
    assert sides["one_after_another"]["steps"] >= 3 * 4 * 2 and sides["whole_passage"]["steps"] >= 4 * 2
    assert sides["whole_passage"]["completeness_error"] <= 0.01
    # a point at layer l costs the blocks above it: 3 at the embeddings … 0 at the last block's output (the head only)
    assert sides["whole_passage"]["block_passes"] >= 3 * 2 * (3 + 2 + 1)


def test_reproduce_refuses_one_window_extras_with_the_whole_passage(capsys, tmp_path, tiny_model_dirs):
    from rcqa.cli import main

    status = main(["reproduce", "--data", str(tmp_path / "none.json"), "--out", str(tmp_path / "run"),
                   "--windows", "all", "--interventions", "--model", tiny_model_dirs["bert"]])
    assert status == 2 and "--interventions reads one window" in capsys.readouterr().err


def test_the_layer_outputs_kept_are_the_explained_windows_own_with_their_place_in_the_passage(tiny_bert):
    qa_model = few_windows(tiny_bert)
    example = gallery_example("bridge-how-much")
    result = explain(qa_model, example, ExplainSettings(windows="all", tolerance=None, steps=2))
    windows = encode(qa_model, example.question, example.passage)
    layout = PassageLayout.of(windows)
    assert len(windows) > 2 and result.window == explain(qa_model, example, ExplainSettings(steps=2)).window
    own = torch.cat(LayerStack(qa_model.model, window_inputs(windows, result.window)).hidden).numpy()
    assert result.hidden_states.shape == own.shape and np.allclose(result.hidden_states, own, atol=1e-6)
    assert result.hidden_tokens == list(layout.positions[result.window])
    # each kept state is the token's of the whole passage that it says: the same word-piece
    assert [result.tokens[p] for p in result.hidden_tokens] == qa_model.tokenizer.convert_ids_to_tokens(
        windows.inputs["input_ids"][result.window, :len(result.hidden_tokens)].tolist())


def test_a_contrast_with_a_foil_in_another_window_reads_both_windows(tiny_bert):
    from rcqa.qa import answer

    qa_model = few_windows(tiny_bert)
    example = gallery_example("bridge-how-much")
    found = answer(qa_model, example.passage, example.question)
    best = found.best
    rank = next(k for k, span in enumerate(found.nbest)
                if span.window != best.window and not span.overlaps(best.start_char, best.end_char))
    result = explain(qa_model, example, ExplainSettings(targets=("span_logits",), contrast=f"nbest:{rank}",
                                                   windows="all", tolerance=None, steps=4))
    contrast = result.targets[0]
    assert contrast.name == "contrast" and contrast.foil.window != result.window
    recorded = contrast.to_dict()["foil"]
    assert (recorded["explained_window"], recorded["in_explained_window"]) == (result.window, False)
    assert list(result.windowing.windows_read) == sorted({result.window, contrast.foil.window})
    assert result.token_offsets[contrast.foil_start_token][0] == contrast.foil.start_char
    checks = [c for c in result.completeness if c.target == "contrast"]
    assert all(c.relative_error <= 1e-3 for c in checks)  # linear in the logits: exact up to float error
    # F = answer's logits − foil's logits: by linearity the contrast's signed sums are span_logits' less the foil's
    span_sums = np.array([c.attribution_sum for c in result.completeness if c.target == "span_logits"])
    foil_sums = np.array([c.window_sums[contrast.foil.window] for c in checks])
    assert np.allclose([c.attribution_sum for c in checks], span_sums + foil_sums, rtol=1e-4, atol=1e-5)
    assert (foil_sums != 0).all()


def uneven_windows() -> Windows:
    """[CLS] q q' [SEP] p… [SEP] [SEP'] over a passage of 6 tokens (token k holds characters 2k, 2k + 1), cut into a
    window of 5 passage tokens p0…p4 and a shorter last one p2…p5, padded to one length: two question tokens and two
    closing specials, as other tokenizers have."""
    passage = [[0, 1, 2, 3, 4], [2, 3, 4, 5]]
    ids, offsets, segments, mask = [], [], [], []
    for window in passage:
        pad = 5 - len(window)
        ids.append([CLS, Q, Q + 1, SEP, *(200 + k for k in window), SEP, SEP + 1] + [0] * pad)
        offsets.append([(0, 0), (0, 1), (2, 3), (0, 0), *((2 * k, 2 * k + 1) for k in window), (0, 0), (0, 0)]
                       + [(0, 0)] * pad)
        segments.append(["special", "question", "question", "special", *["passage"] * len(window), "special",
                         "special"] + ["special"] * pad)
        mask.append([1] * (6 + len(window)) + [0] * pad)
    return Windows(inputs={"input_ids": torch.tensor(ids), "attention_mask": torch.tensor(mask)}, offsets=offsets,
                   passage_mask=torch.tensor([[s == "passage" for s in w] for w in segments]), segments=segments,
                   question="q q'")


def test_the_layout_of_a_shorter_last_window_with_two_closing_specials():
    windows = uneven_windows()
    layout = PassageLayout.of(windows)
    assert layout.ids == (CLS, Q, Q + 1, SEP, 200, 201, 202, 203, 204, 205, SEP, SEP + 1)
    assert layout.positions == ((0, 1, 2, 3, 4, 5, 6, 7, 8, 10, 11), (0, 1, 2, 3, 6, 7, 8, 9, 10, 11))
    for w, positions in enumerate(layout.positions):  # every token of every window is at its place
        assert [layout.ids[p] for p in positions] == windows.inputs["input_ids"][w, :len(positions)].tolist()
        assert [layout.offsets[p] for p in positions] == windows.offsets[w][:len(positions)]


@pytest.mark.parametrize("token, segment, message", [
    (2, None, "the windows do not share their question and special tokens"),  # a question token
    (8, None, "the windows do not share their question and special tokens"),  # a closing special
    (5, "special", "a window's passage tokens are not one contiguous run"),
])
def test_windows_that_cannot_be_laid_end_to_end_are_refused(token, segment, message):
    windows = uneven_windows()
    if segment is None:
        windows.inputs["input_ids"][1, token] += 1
    else:
        windows.segments[1][token] = segment
    with pytest.raises(ValueError, match=f"^{message}$"):
        PassageLayout.of(windows)


def recorded_calls(*calls: tuple[tuple, dict], tokens: int = 4):
    """A stand-in for a LayerStack of one window: its blocks' recorded (args, kwargs), the states above them."""
    from types import SimpleNamespace

    from rcqa.adapter.calls import Call

    return SimpleNamespace(hidden=[torch.zeros(1, tokens, 2)] * (len(calls) + 1), fast=True,
                           calls=[Call(None, None, args, kwargs, None) for args, kwargs in calls])


MASK = torch.tensor([[[[0.0, 0.0, -1e9, 0.0]]]])


@pytest.mark.parametrize("other, same", [
    (((MASK.clone(),), {"mask": MASK.clone(), "flag": [1]}), True),  # equal tensors of batch 1 and equal values
    (((MASK.clone(), None), {"mask": MASK, "flag": [1]}), False),  # one more positional argument
    (((MASK,), {"mask": MASK, "other": [1]}), False),  # other keywords
    (((MASK,), {"mask": MASK + 1, "flag": [1]}), False),  # another mask
    (((None,), {"mask": MASK, "flag": [1]}), False),  # None for a tensor
    (((MASK,), {"mask": MASK, "flag": [2]}), False),  # another value
])
def test_windows_batch_together_only_where_their_blocks_take_the_same_arguments(other, same):
    from rcqa.attribution.passage import _groups
    from rcqa.attribution.stack import same_calls

    one = recorded_calls(((MASK,), {"mask": MASK, "flag": [1]}))
    assert same_calls(one, recorded_calls(other), 0) is same
    assert same_calls(recorded_calls(other), one, 0) is same
    assert _groups([one, recorded_calls(other), one], [0, 1, 2], 0) == ([(0, 1, 2)] if same else [(0, 2), (1,)])


def test_a_mask_of_two_rows_does_not_broadcast_over_a_batch():
    from rcqa.attribution.stack import same_calls

    two_rows = torch.cat([MASK, MASK])
    assert not same_calls(recorded_calls(((two_rows,), {})), recorded_calls(((two_rows.clone(),), {})), 0)
    # only the blocks above the layer are called: the calls below it do not matter
    assert same_calls(recorded_calls(((two_rows,), {}), ((MASK,), {})), recorded_calls(((None,), {}), ((MASK,), {})),
                       1)


def sharp(qa_model):
    """A copy of the model whose QA head's logits are 200× the tiny model's, so that they change along a path (the
    tiny model's are all near 0, where a softmax cannot tell one point of the path from another)."""
    import copy

    model = copy.deepcopy(qa_model.model)
    with torch.no_grad():
        model.qa_outputs.weight.mul_(200.0)
        model.qa_outputs.bias.mul_(200.0)
    return dataclasses.replace(qa_model, model=model)


def four_stacks(qa_model, baseline: str | None = None) -> list[LayerStack]:
    """Windows of 40, 40, 30 and 20 tokens (three batches, the two of one length together), or their baselines."""
    windows = [encode(qa_model, e.question, e.passage) for e in map(gallery_example, ("comet-who", "bridge-how-much"))]
    inputs = [window_inputs(windows[0], w) for w in range(3)] + [window_inputs(windows[1], 3)]
    stacks = [LayerStack(qa_model.model, i) if baseline is None else baseline_stack(qa_model, i, baseline)
              for i in inputs]
    assert [s.hidden[0].shape[1] for s in stacks] == [40, 40, 30, 20]
    return stacks


def joint_target_at(stacks, layer, target, states) -> float:
    """The target on every window's logits run from `layer` at the given states, laid end to end."""
    with torch.no_grad():
        logits = [s.run_from(layer, x) for s, x in zip(stacks, states)]
        return float(target(*(torch.cat([pair[side] for pair in logits], dim=1) for side in (0, 1)))[0])


def direct_gradients(stacks, layer, alphas, targets, baselines=None):
    """∇F per target and point (targets × points × Σ tokens × dim), by autograd on every window's path point at once,
    one point at a time: no batches, no budget. The path starts at the baselines' states (default: zero)."""
    found = []
    for alpha in alphas:
        paths = [(alpha * s.hidden[layer] if b is None else b.hidden[layer] + alpha * (s.hidden[layer] - b.hidden[layer])
                  ).requires_grad_(True) for s, b in zip(stacks, baselines or [None] * len(stacks))]
        with torch.enable_grad():
            logits = [s.run_from(layer, p) for s, p in zip(stacks, paths)]
            start, end = (torch.cat([pair[side] for pair in logits], dim=1) for side in (0, 1))
            found.append([torch.cat([g[0] for g in torch.autograd.grad(t(start, end).sum(), paths, retain_graph=True)])
                          for t in targets])
    return torch.stack([torch.stack(by_target) for by_target in found], dim=1)


G, N = True, False  # a run with a graph (for a backward), one without
BUDGET_RUNS = {  # per chunk of points, hand-worked from the rule: runs of (windows, rows, with a graph)
    1: [[((0,), 1, G), ((1,), 1, N), ((2,), 1, N), ((3,), 1, N), ((1,), 1, G), ((2,), 1, G), ((3,), 1, G)]] * 2,
    3: [[((0, 1), 2, G), ((2,), 1, G), ((3,), 1, N), ((3,), 1, G)]] * 2,
    5: [[((0, 1), 2, G), ((2,), 1, G), ((3,), 1, G)]] * 2,
    8: [[((0, 1), 4, G), ((2,), 2, G), ((3,), 2, G)]],
}


@pytest.mark.parametrize("capacity", sorted(BUDGET_RUNS))
def test_the_joint_gradient_keeps_to_the_memory_budget(tiny_bert, monkeypatch, capacity):
    """Four windows of 40, 40, 30 and 20 tokens (batches: the two of one length together), two points, a capacity
    of `capacity` path points: a chunk has at most capacity // 4 points (at least one); a batch keeps its graph while
    the rows kept fit in the capacity (the first always), the others run without one and again with one."""
    from rcqa.attribution import passage

    qa_model = sharp(few_windows(tiny_bert))  # logits that change along the path: a batch run with another
    stacks, pads = four_stacks(qa_model), four_stacks(qa_model, "pad")  # point's logits would show
    sized, runs = [], []
    monkeypatch.setattr(passage, "chunk_size", lambda stack, layer, x, budget, targets: sized.append(x.shape[1]) or capacity)
    run = PassagePath._run
    monkeypatch.setattr(PassagePath, "_run", lambda self, batch, path: runs.append(
        (batch, path.shape[0], path.requires_grad)) or run(self, batch, path))
    span = 40 + 12  # a span of window 1, read by both targets; span_log_prob reads every window
    targets = [Target("span_log_prob", span, span + 2), Target("span_logits", span, span + 2)]
    layer, alphas = 1, np.array([0.3, 0.8])
    path = PassagePath(stacks, pads, layer, targets, [0, 1, 2, 3], 1)
    ours = path.gradients(alphas, np.eye(2))[:, :, 0]
    assert sized == [40]  # the capacity is the longest window's
    assert runs == [run for chunk in BUDGET_RUNS[capacity] for run in chunk]
    reference = direct_gradients(stacks, layer, alphas, targets, pads)
    assert float((ours - reference).abs().max() / reference.abs().max()) <= 1e-5
    assert ours[1, :, 40:80].any() and not ours[1, :, :40].any() and not ours[1, :, 80:].any()  # window 1's logits
    assert ours[0, :, 80:].any()  # span_log_prob reads every window through its softmax


@pytest.mark.parametrize("name, read", [("span_log_prob", [0, 1, 2, 3]), ("span_logits", [1])])
def test_the_joint_values_are_the_target_at_every_windows_path_point(tiny_bert, name, read):
    qa_model = sharp(few_windows(tiny_bert))
    stacks, pads = four_stacks(qa_model), four_stacks(qa_model, "pad")
    target, layer, alphas = Target(name, 52, 54), 1, [0.2, 0.5, 0.9]  # a span of window 1
    path = PassagePath(stacks, pads, layer, [target], read, 1)  # 1 MB: the batches run one after another
    expected = [joint_target_at(stacks, layer, target, [p.hidden[layer] + a * (s.hidden[layer] - p.hidden[layer])
                                                        for s, p in zip(stacks, pads)]) for a in alphas]
    assert len(set(np.round(expected, 3))) == 3  # the target changes along the path
    assert path.values(alphas)[0].tolist() == pytest.approx(expected, rel=1e-5, abs=1e-5)


def test_the_zero_baselines_end_is_run_from_each_layer(tiny_bert):
    qa_model = sharp(few_windows(tiny_bert))
    example = gallery_example("bridge-how-much")
    result = explain(qa_model, example, ExplainSettings(windows="all", baseline="zero", tolerance=None, steps=2))
    windows = encode(qa_model, example.question, example.passage)
    stacks = [LayerStack(qa_model.model, window_inputs(windows, w)) for w in range(len(windows))]
    explained = explained_window(qa_model, example)
    before = sum(s.hidden[0].shape[1] for s in stacks[:explained.window])
    target = Target("span_log_prob", before + explained.start_token, before + explained.end_token)
    at_zero = [joint_target_at(stacks, layer, target, [torch.zeros_like(s.hidden[layer]) for s in stacks])
               for layer in range(len(result.layers))]
    at_input = joint_target_at(stacks, 0, target, [s.hidden[0] for s in stacks])
    assert [c.f_baseline for c in result.completeness] == pytest.approx(at_zero, abs=1e-4)
    assert at_zero != pytest.approx([at_input] * len(at_zero), abs=1e-2)  # the zero end is not the input's


def test_the_windows_read_are_those_a_target_has_a_gradient_in():
    from types import SimpleNamespace

    from rcqa.attribution.passage import _read_windows

    stacks = [SimpleNamespace(start_logits=torch.zeros(1, n), end_logits=torch.zeros(1, n)) for n in (4, 3, 5)]
    # the span at token 2 of window 0; the null at [CLS] of window 2, the first token after 4 + 3
    assert _read_windows(stacks, [Target("span_logits", 2, 2)]) == [0]
    assert _read_windows(stacks, [Target("answer_vs_null", 2, 2, null_token=7)]) == [0, 2]
    assert _read_windows(stacks, [Target("end_logit", 6, 6)]) == [1]  # the last token of window 1
    assert _read_windows(stacks, [Target("span_log_prob", 2, 2)]) == [0, 1, 2]  # a softmax over every window


def test_the_lens_margin_of_a_whole_passage_is_read_in_the_spans_own_window(tiny_bert):
    # the whole passage numbers its tokens over every window; the lens reads the span in its own window, as for one
    from rcqa.lens.contrast import contrast_margins

    qa_model = few_windows(tiny_bert)
    example = gallery_example("bridge-how-much")
    settings = ExplainSettings(contrast="runner-up", tolerance=None, steps=2)
    one = explain(qa_model, example, settings)
    whole = explain(qa_model, example, dataclasses.replace(settings, windows="all"))
    assert whole.window == one.window > 0 and whole.targets[0].start_token != one.targets[0].start_token
    assert whole.explained_span() == one.explained_span()
    assert whole.targets[0].foil == one.targets[0].foil
    assert contrast_margins(qa_model, whole).tolist() == pytest.approx(contrast_margins(qa_model, one).tolist())
