"""Decoding with "no answer": the official BERT run_squad rule worked out by hand, the rule of the old
transformers pipeline (select_starts_ends with handle_impossible_answer, still shipped in transformers 5), and
planted logits on a tiny model so that null wins, loses and ties under both."""
import json
import math

import numpy as np
import pytest
import torch
from transformers.pipelines.document_question_answering import select_starts_ends

from rcqa import qa
from rcqa.model import pick_device
from rcqa.model.checkpoint import load_checkpoint
from rcqa.spans import decode, decode_with_null
from rcqa.types import Answer
from tests.helpers.windows import PASSAGE, PASSAGE_MASK, windows

# [CLS] q [SEP] alpha beta gamma delta [SEP]: tokens 3..6 are the passage


def planted(null: tuple[float, float], span: tuple[int, int, float, float], length: int = 8, n: int = 1):
    """Logits zero everywhere but [CLS] (start, end = null) and one span (start token, end token, logits)."""
    start, end = torch.zeros(n, length), torch.zeros(n, length)
    start[:, 0], end[:, 0] = null
    s, e, start_logit, end_logit = span
    start[:, s], end[:, e] = start_logit, end_logit
    return start, end


def pipeline_abstains(start: torch.Tensor, end: torch.Tensor, mask: torch.Tensor) -> bool:
    """The old question-answering pipeline's choice: window by window, softmax over the passage and [CLS],
    start × end probabilities; "no answer" (the minimal [CLS] product over windows) is appended after the
    spans and a stable sort by score puts it first only when it is strictly larger."""
    null, best = 1e6, -1.0
    for w in range(start.shape[0]):
        p_mask = (~mask[w]).numpy().astype(int)
        p_mask[0] = 0  # the pipeline leaves [CLS] in the softmax when it handles impossible answers
        _, _, scores, null = select_starts_ends(start[w:w + 1].numpy(), end[w:w + 1].numpy(), p_mask[None],
                                                np.ones((1, start.shape[1]), dtype=int), min_null_score=null,
                                                top_k=1, handle_impossible_answer=True, max_answer_len=30)
        best = max(best, float(scores[0]))
    return null > best


@pytest.mark.parametrize("null, span, abstains", [
    ((3.0, 2.0), (4, 5, 2.0, 2.5), True),    # by hand: null 5.0 − best span 4.5 = 0.5 > 0: abstain
    ((1.0, 2.0), (4, 5, 2.0, 2.5), False),   # 3.0 − 4.5 < 0: answer
    ((2.0, 2.5), (4, 5, 2.0, 2.5), False),   # 4.5 − 4.5 = 0, not > 0: a tie answers
])
def test_one_window_run_squad_and_the_pipeline_agree_on_wins_losses_and_ties(null, span, abstains):
    start, end = planted(null, span)
    spans, no_answer = decode_with_null(start, end, windows(), PASSAGE)
    assert no_answer.chosen is abstains
    assert pipeline_abstains(start, end, PASSAGE_MASK) is abstains
    assert no_answer.score == sum(null) and no_answer.best_span_score == span[2] + span[3]
    assert spans[0].text == "beta gamma"  # the rejected (or chosen) best span is still listed


def test_the_threshold_is_on_null_minus_best_span_score_and_a_tie_answers():
    start, end = planted((3.0, 2.0), (4, 5, 2.0, 2.5))  # difference 0.5
    assert decode_with_null(start, end, windows(), PASSAGE, threshold=0.4)[1].chosen
    assert not decode_with_null(start, end, windows(), PASSAGE, threshold=0.5)[1].chosen
    assert not decode_with_null(start, end, windows(), PASSAGE, threshold=1.0)[1].chosen
    assert decode_with_null(start, end, windows(), PASSAGE, threshold=-1.0)[1].threshold == -1.0


def test_over_windows_the_null_score_is_the_minimum_as_in_run_squad_not_the_pipelines_probabilities():
    # window 0: [CLS] 6.0, span 4.5 (logit sums); window 1: [CLS] 4.0 and every passage logit 0 but one 0.5.
    # run_squad: null = min(6.0, 4.0) = 4.0 (window 1) < best span 4.5: answer.
    start, end = planted((3.0, 3.0), (4, 5, 2.0, 2.5), n=2)
    start[1] = end[1] = 0.0
    start[1, 0], end[1, 0], start[1, 3] = 2.0, 2.0, 0.5
    spans, no_answer = decode_with_null(start, end, windows(2), PASSAGE)
    assert (no_answer.score, no_answer.window, no_answer.chosen) == (4.0, 1, False)
    # The pipeline normalises each window apart: in window 1 [CLS] holds p ≈ 0.58 × 0.60 of the mass, far above
    # window 0's best span (≈ 0.29 × 0.39), so it abstains where run_squad answers.
    assert pipeline_abstains(start, end, PASSAGE_MASK.repeat(2, 1))


def test_no_answer_shares_the_softmax_of_every_valid_span_of_every_window():
    torch.manual_seed(0)
    start, end = torch.randn(2, 8), torch.randn(2, 8)
    spans, no_answer = decode_with_null(start, end, windows(2), PASSAGE, n_best=100)
    # by hand: every start ≤ end inside the passage tokens 3..6 of both windows, and the minimal [CLS] sum
    span_scores = [float(start[w, i] + end[w, j]) for w in range(2) for i in range(3, 7) for j in range(i, 7)]
    null = min(float(start[w, 0] + end[w, 0]) for w in range(2))
    expected = math.exp(null) / (math.exp(null) + sum(math.exp(s) for s in span_scores))
    assert no_answer.probability == pytest.approx(expected, rel=1e-6)
    assert no_answer.probability + sum(s.probability for s in spans) == pytest.approx(1.0, abs=1e-6)
    assert sum(s.probability for s in decode(start, end, windows(2), PASSAGE, n_best=100)) == pytest.approx(1.0)


def test_a_passage_with_no_valid_span_abstains():
    start, end = planted((0.0, 0.0), (1, 1, 9.0, 9.0))  # only the question token is high; mask the passage off
    mask = torch.zeros(1, 8, dtype=torch.bool)
    spans, no_answer = decode_with_null(start, end, windows(mask=mask), PASSAGE)
    assert spans == [] and no_answer.chosen and no_answer.probability == 1.0 and no_answer.best_span_score is None


@pytest.fixture(scope="module")
def squad2_tiny(tiny_model_dirs, tmp_path_factory):
    """The tiny BERT with a card that says it was trained with unanswerable questions, at threshold 0.5."""
    folder = tmp_path_factory.mktemp("squad2-tiny")
    import shutil
    shutil.copytree(tiny_model_dirs["bert"], folder, dirs_exist_ok=True)
    (folder / "rcqa_card.json").write_text(json.dumps({"no_answer": {"threshold": 0.5}}))
    return load_checkpoint(str(folder), pick_device("cpu"))


def plant_on(monkeypatch, null: tuple[float, float], span_logits: tuple[float, float]):
    """Replace the model's logits by planted ones on its real windows: [CLS] gets null, the passage's first
    token the span's start logit and its last token the end logit."""
    def fake(qa_model, windows, batch_size=qa.WINDOW_BATCH):
        start = torch.zeros(windows.passage_mask.shape)
        end = torch.zeros(windows.passage_mask.shape)
        passage = torch.nonzero(windows.passage_mask[0]).flatten()
        start[:, 0], end[:, 0] = null
        start[:, passage[0]], end[:, passage[-1]] = span_logits
        return start, end
    monkeypatch.setattr(qa, "logits", fake)


@pytest.mark.parametrize("null, abstains", [((3.0, 3.0), True), ((2.0, 2.0), False), ((2.5, 2.5), False)])
def test_a_squad2_tiny_model_abstains_by_default_at_its_cards_threshold(monkeypatch, squad2_tiny, null, abstains):
    # the span scores 4.5; null 6.0 − 4.5 = 1.5 > 0.5 abstains, 4.0 − 4.5 answers, 5.0 − 4.5 = 0.5 ties: answers
    assert squad2_tiny.trained_with_unanswerable and squad2_tiny.null_threshold == 0.5
    plant_on(monkeypatch, null, (2.0, 2.5))
    answer = qa.answer(squad2_tiny, "alpha beta gamma delta", "what comes first?")
    assert answer.abstained is abstains and answer.no_answer.threshold == 0.5
    assert (answer.text == "") is abstains and answer.best.text == "alpha beta gamma delta"
    data = answer.to_dict()
    assert data["no_answer"]["chosen"] is abstains and data["answer"] == answer.text
    assert sum(e["no_answer"] for e in data["nbest"]) == 1
    assert qa.answer(squad2_tiny, "alpha beta gamma delta", "what?", allow_null=False).no_answer is None


def test_a_model_without_a_no_answer_card_never_abstains_unless_asked(monkeypatch, tiny_model_dirs):
    model = load_checkpoint(tiny_model_dirs["bert"], pick_device("cpu"))
    assert not model.trained_with_unanswerable and model.null_threshold == 0.0
    plant_on(monkeypatch, (9.0, 9.0), (2.0, 2.5))
    assert qa.answer(model, "alpha beta gamma delta", "what?").text == "alpha beta gamma delta"
    assert qa.answer(model, "alpha beta gamma delta", "what?", allow_null=True).abstained


def test_the_null_entry_takes_its_place_in_the_nbest_list_and_round_trips():
    start, end = planted((2.0, 2.4), (4, 5, 2.0, 2.5))  # null just below the best span, above the rest
    spans, no_answer = decode_with_null(start, end, windows(), PASSAGE, n_best=3)
    answer = Answer(question="q", nbest=tuple(spans), n_windows=1, no_answer=no_answer)
    ranked = answer.to_dict()["nbest"]
    assert [e["text"] for e in ranked] == ["beta gamma", "", ranked[2]["text"], ranked[3]["text"]]
    assert ranked[1]["label"] == "no answer"
    assert Answer.from_dict(answer.to_dict()) == answer


def test_hub_cards_that_list_squad_v2_allow_null(tmp_path):
    from rcqa.model.checkpoint import read_card
    (tmp_path / "README.md").write_text("---\nlanguage: en\ndatasets:\n- squad_v2\n---\n# a model\n")
    assert read_card(tmp_path)["no_answer"]
    (tmp_path / "README.md").write_text("---\ndatasets:\n- squad\n---\ntrained without squad_v2\n")
    assert "no_answer" not in read_card(tmp_path)
