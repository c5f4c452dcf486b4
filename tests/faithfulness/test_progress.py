"""What the methods' comparison and the sanity check tell a waiting page as they go: shares of the work that never
go back, start above 0 and end at 1, worked out by hand from the cost model's passes, with texts that name each
method, each randomised part and the deletions."""
import re

import pytest

from rcqa.faithfulness.compare import Protocol, compare
from rcqa.faithfulness.sanity import model_parts, sanity_checks
from rcqa.faithfulness.summaries import SUMMARIES
from rcqa.gallery import gallery_example

EXAMPLE = gallery_example("lighthouse-when")


def heard(run) -> list[tuple[float, str]]:
    reports: list[tuple[float, str]] = []
    run(lambda share, where: reports.append((share, where)))
    return reports


def test_the_comparison_tells_each_method_then_the_deletions_by_their_share_of_the_passes(tiny_bert):
    protocol = Protocol(k=2, draws=2, fractions=(0.5,), bins=(0.5,))
    reports = heard(lambda told: compare(tiny_bert, EXAMPLE, ["gradient"], protocol, progress=told))
    shares, texts = [share for share, _ in reports], [text for _, text in reports]
    # by hand: the recording forward 1/3 and the gradient's pass 1; random reads no model; the deletions are 3
    # rankings (the gradient's magnitude, 2 random draws) × (k + 1 = 3 counts, 1 fraction, 1 bin deleted and kept)
    # = 18 forwards of 1/3: 6 passes; and the re-answers each summary makes of its own, per ranking, after them.
    # Without those the methods end at (4/3) / (4/3 + 6) = 2/11.
    own = 3 * sum(summary.variants for summary in SUMMARIES.values())
    methods = (4 / 3) / (4 / 3 + (18 + own) / 3)
    assert texts[:2] == ["method 1 of 2: Gradient sensitivity", "method 2 of 2: Random"]
    assert shares[:2] == pytest.approx([methods, methods])
    deletions = reports[2:-1]
    assert deletions and all(re.fullmatch(r"re-answering with words deleted: \d+ of \d+ variants", t)
                             for _, t in deletions)
    for share, text in deletions:  # the rest in proportion to the variants answered, the summaries' own last
        done, total = map(int, re.findall(r"\d+", text))
        assert share == pytest.approx(methods + (1 - methods) * done / (total + own))
    assert reports[-1] == (1.0, "compared 2 rankings with random ones")
    assert shares == sorted(shares) and shares[0] > 0


def test_the_sanity_check_tells_each_method_on_each_randomised_model(tiny_bert):
    reports = heard(lambda told: sanity_checks(tiny_bert, EXAMPLE, ["gradient"], progress=told))
    parts = model_parts(tiny_bert)
    models = 1 + 2 * len(parts)  # the trained model, then each part randomised with those above it and alone
    # the gradient is the model's whole cost (random reads none): each model's share is done with its gradient
    assert [share for share, _ in reports] == pytest.approx([(m + 1) / models for m in range(models) for _ in "gr"])
    assert reports[0][1] == f"the trained model (model 1 of {models}): method 1 of 2, Gradient sensitivity"
    assert reports[3][1] == f"{parts[0].label} randomised with those above it (model 2 of {models}): method 2 of 2, Random"
    assert reports[-1][1] == (f"{parts[-1].label} randomised alone (model {models} of {models}): method 2 of 2, "
                              "Random")
