"""What a head does: its attention patterns against transformers' own output_attentions of an eager copy loaded
apart, the shared model left without a hook or a changed config, and the flag's share and the sentences read from it
worked out by hand."""
import numpy as np
import pytest
import torch
from transformers import AutoModelForQuestionAnswering

from rcqa.attention_heads import FLAG_RATIO, HeadPatterns, head_case, head_patterns
from rcqa.figures.heads import flagged_reading, head_reading
from rcqa.gallery import GALLERY
from rcqa.model import load_model
from tests.attention_heads.test_result import hand_made

EXAMPLE = GALLERY[0]


@pytest.mark.parametrize("family", ["bert", "distilbert", "roberta"])
def test_the_patterns_are_transformers_output_attentions_of_the_answers_window(tiny_model_dirs, family):
    qa_model = load_model(tiny_model_dirs[family])
    case = head_case(qa_model, EXAMPLE.passage, EXAMPLE.question)
    found = head_patterns(qa_model, case)
    eager = AutoModelForQuestionAnswering.from_pretrained(tiny_model_dirs[family], attn_implementation="eager").eval()
    with torch.no_grad():
        reference = torch.stack(eager(**case.inputs, output_attentions=True).attentions)[:, 0].numpy()
    # the question's tokens are the first sequence's (the tokenizer's sequence ids), the answer's its span's tokens
    sequence = qa_model.tokenizer(EXAMPLE.question, EXAMPLE.passage).sequence_ids()
    question = [i for i, s in enumerate(sequence) if s == 0]
    assert found.question == question and found.tokens[0] == qa_model.tokenizer.cls_token
    span = list(range(case.span.start_token, case.span.end_token + 1))
    for layer, head in [(0, 0), (len(reference) - 1, reference.shape[1] - 1)]:
        labels, grid = found.pattern(layer, head)
        np.testing.assert_allclose(grid[0], reference[layer, head][span].mean(axis=0)[found.passage], atol=1e-6)
        np.testing.assert_allclose(grid[1], reference[layer, head, 0, found.passage], atol=1e-6)
        np.testing.assert_allclose(grid[2:], reference[layer, head][question][:, found.passage], atol=1e-6)
        assert labels[1] == "[CLS]" and len(labels) == 2 + len(question)
    shares = reference[:, :, question][..., span].sum(axis=-1).mean(axis=-1)
    np.testing.assert_allclose(found.question_to_answer(), shares, atol=1e-6)


def test_reading_the_patterns_leaves_the_shared_model_as_it_was(tiny_bert):
    case = head_case(tiny_bert, EXAMPLE.passage, EXAMPLE.question)
    implementation = tiny_bert.model.config._attn_implementation
    with torch.no_grad():
        before = tiny_bert.model(**case.inputs).start_logits
    head_patterns(tiny_bert, case)
    hooks = [name for name, module in tiny_bert.model.named_modules()
             if module._forward_hooks or module._forward_pre_hooks]
    assert hooks == [] and tiny_bert.model.config._attn_implementation == implementation
    with torch.no_grad():
        after = tiny_bert.model(**case.inputs)
    assert after.attentions is None  # no attention recorded on the shared model
    torch.testing.assert_close(after.start_logits, before)


def test_the_flag_is_the_questions_mean_mass_on_the_span_against_twice_the_uniform_share():
    # 1 layer, 2 heads, 5 tokens: [CLS] q1 q2 | p3 p4, the answer p4; rows kept: [CLS], q1, q2, p4
    attention = np.zeros((1, 2, 4, 5))
    attention[0, 0, :, 4] = 1.0  # head 0: every row on the answer token
    attention[0, 1] = 0.2  # head 1: uniform
    attention[0, 0, 1] = [0.5, 0.0, 0.0, 0.0, 0.5]  # q1 puts half on the answer, q2 all of it: mean 0.75
    found = HeadPatterns(["[CLS]", "q1", "q2", "p3", "p4"], [0, 1, 2, 4], attention, [1, 2], [3, 4], [4])
    np.testing.assert_allclose(found.question_to_answer(), [[0.75, 0.2]])
    assert found.uniform_share == pytest.approx(1 / 5) and FLAG_RATIO == 2.0
    assert found.flagged().tolist() == [[True, False]]  # 0.75 ≥ 0.4; 0.2 is the uniform share itself
    top = found.top_attended(0, 0, k=1)
    assert top == {"answer": [("p4", 1.0)], "[CLS]": [("p4", 1.0)], "question": [("p4", 0.75)]}


def test_the_flagged_heads_and_one_heads_reading_are_read_from_the_shares():
    attention = np.full((1, 2, 4, 5), 0.2)
    attention[0, 0, 1:3] = [0.0, 0.0, 0.0, 0.25, 0.75]  # head 0: the question's tokens put 0.75 on the answer
    patterns = HeadPatterns(["[CLS]", "q1", "q2", "p3", "p4"], [0, 1, 2, 4], attention, [1, 2], [3, 4], [4])
    scores = hand_made([[-0.25, 0.5]], [[0.0, 0.0]], flips=[[True, False]])
    assert flagged_reading(scores, patterns) == (
        "1 of 2 heads look from the question at the answer (at least 2 times the uniform share (0.200) of their "
        "attention from the question's tokens on the answer span): block 0 head 0 (0.750).")
    assert head_reading(scores, patterns, 0, 0) == (
        "Knocking out block 0, head 0 changes log p(span) by -0.250 and changes the answer to “x”. From the "
        "question's tokens it puts 0.750 of its attention on the answer span, 3.8 times the uniform share (0.200): "
        "it looks from the question at the answer (at least 2 times).")
