"""Independent references for the answer lens and the interventions: a plain Hugging Face forward with
output_hidden_states=True, and whole-word answer probabilities worked out by hand (loops and scipy's softmax)."""
from __future__ import annotations

import copy

import numpy as np
import torch
from scipy.special import softmax

from rcqa.text import written_words

MAX_TOKENS = 30


def one_window(qa_model, example) -> tuple[dict, list[tuple[int, int]], list[int]]:
    """The model inputs of a passage that fits one window, each token's character span, and the passage tokens."""
    encoded = qa_model.tokenizer(example.question, example.passage, return_offsets_mapping=True, return_tensors="pt")
    offsets = [tuple(pair) for pair in encoded.pop("offset_mapping")[0].tolist()]
    passage = [t for t, sequence in enumerate(encoded.sequence_ids(0)) if sequence == 1]
    inputs = {k: v for k, v in encoded.items() if k in qa_model.tokenizer.model_input_names}
    return inputs, offsets, passage


def hidden_states(model, inputs: dict) -> list[np.ndarray]:
    """Every layer's states (tokens × dim) from the model's own output_hidden_states, on a copy: transformers records
    them with hooks it leaves on the modules, and the tests' models are shared between tests like the app's."""
    with torch.no_grad():
        output = copy.deepcopy(model)(**inputs, output_hidden_states=True)
    return [h[0].double().numpy() for h in output.hidden_states]


def answer_probabilities(start: np.ndarray, end: np.ndarray, offsets: list[tuple[int, int]], passage_tokens: list[int],
                         passage: str) -> dict[tuple[int, int], float]:
    """Per whole-word answer (first and last character), its probability: a softmax over every token span with
    start ≤ end < start + 30 in the passage that answers with at least one word, each span's probability added to
    the answer its words give, punctuation at either end left out."""
    words = written_words(passage)

    def word_of(char: int) -> int:
        return next(i for i, w in enumerate(words) if char < w.end_char)

    spans, scores = [], []
    for s in passage_tokens:
        for e in passage_tokens:
            if not s <= e < s + MAX_TOKENS:
                continue
            first, last = word_of(offsets[s][0]), word_of(offsets[e][0])
            while first <= last and words[first].is_punctuation:
                first += 1
            while last >= first and words[last].is_punctuation:
                last -= 1
            if first <= last:
                spans.append((words[first].start_char, words[last].end_char))
                scores.append(start[s] + end[e])
    answers: dict[tuple[int, int], float] = {}
    for span, probability in zip(spans, softmax(np.array(scores))):
        answers[span] = answers.get(span, 0.0) + probability
    return answers


def standing(answers: dict[tuple[int, int], float], span: tuple[int, int]) -> tuple[int, float]:
    """(rank, probability) of one answer: 1 + the answers strictly more probable."""
    probability = answers[span]
    return 1 + sum(p > probability for p in answers.values()), probability
