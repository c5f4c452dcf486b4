"""What scoring the heads tells a waiting page as it goes: shares that never go back, start above 0 and end at 1,
and texts naming each score, attention attribution's blocks and the heads knocked out, counted from the model's
own shape."""
import re

import pytest

from rcqa.attention_heads import score_heads
from rcqa.gallery import gallery_example


def test_scoring_the_heads_tells_each_score_block_and_batch_of_knockouts(tiny_bert):
    reports: list[tuple[float, str]] = []
    score_heads(tiny_bert, gallery_example("comet-who"), progress=lambda share, where: reports.append((share, where)))
    shares, texts = [share for share, _ in reports], [text for _, text in reports]
    blocks, heads = tiny_bert.num_layers, tiny_bert.config.num_attention_heads
    assert shares == sorted(shares) and shares[0] > 0 and shares[-1] == pytest.approx(1)
    assert texts[0] == "AttnLRP relevance of every head"
    assert [t for t in texts if t.startswith("attention attribution")] == [
        f"attention attribution: block {b} of {blocks}" for b in range(1, blocks + 1)]
    knocked = [re.fullmatch(r"heads knocked out: (\d+) of (\d+) \(block (\d+) of (\d+)\)", t) for t in texts
               if t.startswith("heads knocked out")]
    assert knocked and all(knocked)
    counts = [(int(m[1]), int(m[2]), int(m[3]), int(m[4])) for m in knocked]
    assert counts[-1] == (blocks * heads, blocks * heads, blocks, blocks)
    assert all(block == -(-done // heads) for done, _, block, _ in counts)  # the block the last head done is in
    assert texts.index("gradient importance of every head") < texts.index(knocked[0].string)  # the scores first
    assert texts[-1] == f"heads knocked out: {blocks * heads} of {blocks * heads} (block {blocks} of {blocks})"
