"""A long paste's reading and its answer lens tell their progress as they go (issue 56: neither had a point where a
server could stop them, and held another visitor's job up to 10.6 s and 25.8 s): after every batch of windows, and
the lens after every layer decoded; telling changes nothing they compute, and a report that raises ends the work."""
import math

import pytest

from rcqa.lens import answer_lens
from rcqa.qa import WINDOW_BATCH, encode, read


class Stop(Exception):
    pass


@pytest.fixture(scope="module")
def long_paste(tiny_bert):
    sentence = "The ferry to Corran Point leaves the harbour at nine and returns by the evening tide. "
    passage = sentence * 100
    question = "When does the ferry leave?"
    windows = len(encode(tiny_bert, question, passage))
    assert windows > 2 * WINDOW_BATCH  # three batches or more
    return passage, question, windows


def test_a_long_reading_tells_each_batch_of_windows_and_reads_the_same(tiny_bert, long_paste):
    passage, question, windows = long_paste
    told = []
    found = read(tiny_bert, passage, question, progress=lambda share, where: told.append((share, where)))
    batches = math.ceil(windows / WINDOW_BATCH)
    assert [share for share, _ in told] == [min(b * WINDOW_BATCH, windows) / windows for b in range(1, batches + 1)]
    assert told[-1] == (1.0, f"window {windows}/{windows} read")
    plain = read(tiny_bert, passage, question)
    assert found.answer == plain.answer
    assert (found.start_logits == plain.start_logits).all() and (found.end_logits == plain.end_logits).all()


def test_a_report_that_raises_ends_the_reading_at_its_first_batch(tiny_bert, long_paste):
    passage, question, _ = long_paste
    told = []

    def stop(share, where):
        told.append(share)
        raise Stop

    with pytest.raises(Stop):
        read(tiny_bert, passage, question, progress=stop)
    assert len(told) == 1


def test_the_lens_tells_its_three_parts_in_order_and_reads_the_same(tiny_bert, long_paste):
    passage, question, windows = long_paste
    from rcqa.types import Example

    example = Example(id="long", passage=passage, question=question)
    told = []
    found = answer_lens(tiny_bert, example, progress=lambda share, where: told.append((share, where)))
    batches, layers = math.ceil(windows / WINDOW_BATCH), len(found.layers)
    assert len(told) == 2 * batches + layers
    shares = [share for share, _ in told]
    assert shares == sorted(shares) and shares[-1] == pytest.approx(1.0)
    assert [where.split(":")[0] for _, where in told] == (["answering"] * batches + ["reading every layer"] * batches
                                                           + ["decoding each layer's answer"] * layers)
    assert shares[batches - 1] == pytest.approx(1 / 3) and shares[2 * batches - 1] == pytest.approx(2 / 3)
    assert found.to_dict() == answer_lens(tiny_bert, example).to_dict()
