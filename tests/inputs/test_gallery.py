"""The built-in gallery covers what the dashboard promises to show."""
import re

from rcqa.gallery import GALLERY, gallery_example


def test_gallery_size_and_unique_ids():
    assert len(GALLERY) >= 12
    assert len({e.id for e in GALLERY}) == len(GALLERY)


def test_gold_answers_sit_at_their_offsets():
    for example in GALLERY:
        for gold in example.answers:
            assert example.passage[gold.start_char:gold.start_char + len(gold.text)] == gold.text


def test_several_quantifier_questions_with_two_or_more_numbers():
    quantifier = [e for e in GALLERY if re.search(r"\bhow (many|much)\b", e.question, re.IGNORECASE)]
    assert len(quantifier) >= 3
    assert all(len(re.findall(r"\d[\d,.]*", e.passage)) >= 2 for e in quantifier)


def test_three_unanswerable_and_one_long_example():
    unanswerable = [e for e in GALLERY if e.is_impossible]
    assert len(unanswerable) == 3 and not any(e.answers for e in unanswerable)
    assert all(e.title.endswith("(no answer in the passage)") for e in unanswerable)
    assert len({e.passage for e in unanswerable}) == 3
    assert len(gallery_example("canal-long").passage.split()) > 400
