"""The Sentences tab's check against the model (rcqa.figures.sentence_check): its table holds the re-answers' drops,
the surrogate's weights and the explanation's shares as the library computes them apart, its sentences say what a
table worked out by hand says, and sentence_evidence reports every reading, where a stopped job ends."""
import numpy as np
import pandas as pd
import pytest

from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import resolve
from rcqa.faithfulness.sentences import SentenceCheck, sentence_evidence
from rcqa.figures import sentence_check_chart, sentence_check_readings
from rcqa.gallery import gallery_example
from rcqa.model import load_model
from tests.helpers.lighthouse import SENTENCES


@pytest.fixture(scope="module")
def explained():
    qa_model, example = load_model(), gallery_example("lighthouse-who")
    result = explain(qa_model, example, resolve("default", method="attnlrp"))
    heard: list[tuple[float, str]] = []
    evidence = sentence_evidence(qa_model, example, result.explained_span(), 8,
                                 progress=lambda share, where: heard.append((share, where)))
    return qa_model, result, evidence, heard


def test_every_reading_is_heard_and_a_stop_there_ends_the_check(explained):
    qa_model, result, _, heard = explained
    readings = 1 + len(SENTENCES) + 8  # the whole passage, each sentence left out, each random ablation
    assert [share for share, _ in heard] == pytest.approx([n / readings for n in range(1, readings + 1)])

    class Stopped(Exception):
        pass

    def stop(share, where):
        raise Stopped

    with pytest.raises(Stopped):
        sentence_evidence(qa_model, result.example, result.explained_span(), 8, progress=stop)


def test_the_table_holds_the_drops_the_weights_and_the_shares_of_each_sentence(explained):
    _, result, evidence, _ = explained
    table = sentence_check_chart(result, evidence, layer=0).data
    assert list(table.text) == SENTENCES
    assert list(table.holds_answer) == [True, False, False, False]  # who designed it: the first sentence says
    assert "Ellison" in result.example.passage[slice(*result.explained_span())]
    np.testing.assert_allclose(table.probability_lost, evidence.ablation.probability - np.array(evidence.ablation.without))
    np.testing.assert_allclose(table.surrogate_weight, evidence.surrogate.weights)
    units = result.granularity("sentence")
    passage = units.passage_units()
    magnitudes = np.abs(units.scores[0, passage])
    np.testing.assert_allclose(table.share_pct, 100 * magnitudes / magnitudes.sum())
    assert sentence_check_chart(result, evidence, layer=len(result.layers) - 1).data.share_pct.iloc[1:].eq(0).all()


TABLE = pd.DataFrame({"sentence": [1, 2, 3, 4], "holds_answer": [False, True, False, False],
                      "probability_lost": [0.10, 0.90, 0.30, -0.04], "share_pct": [20.0, 50.0, 5.0, 25.0]})


def test_its_sentences_say_what_a_table_worked_out_by_hand_says():
    check = SentenceCheck(3, [0.5, None], [0.0, None], [-0.04, None], [-0.5, None], random_drop=0.12)
    said = sentence_check_readings(TABLE, check, ["embeddings", "block 0"], 0, "AttnLRP", 0.41)
    assert said[:4] == [
        "Deleting sentence #3 lowers the answer's probability most among the context sentences (+0.300); a random "
        "context sentence lowers it by +0.120 on average.",  # (0.10 + 0.30 − 0.04) / 3
        "At embeddings, AttnLRP puts sentence #4 first among the context sentences; deleting it lowers the answer's "
        "probability by -0.040.",  # #4 has the largest share of the three, and #3 the largest drop
        "At embeddings, its ranking of the 3 context sentences agrees with leaving each out at Spearman's ρ = +0.50.",
        "ContextCite's surrogate fits its held-out ablations with R² = 0.41; the ranking agrees with its weights at "
        "ρ = -0.50."]
    assert "sentence-check" in said[-1] and "paired intervals" in said[-1]
    unscored = sentence_check_readings(TABLE, check, ["embeddings", "block 0"], 1, "AttnLRP", None)
    assert unscored[1:3] == ["At block 0, AttnLRP scores no context sentence.",
                             "At block 0, Spearman's ρ with leaving each out is undefined (fewer than 3 context "
                             "sentences, or a side constant)."]
    alone = sentence_check_readings(TABLE[TABLE.sentence <= 2], check, ["embeddings"], 0, "AttnLRP", None)
    assert alone == ["The passage has 1 sentence besides the answer's: there is no ranking of the context to check."]
