"""Dataset runs built by hand: rows as the runner writes them, with numbers worked out on paper, and a run folder
holding them (the dataset report's tests and the Dataset page's)."""
import json

from rcqa.analysis.pos import GROUPS
from rcqa.dataset import store

LAYERS = ["embeddings", "block 0", "block 1"]
JSD_A = [[0, .2, .4], [.2, 0, .3], [.4, .3, 0]]
JSD_B = [[0, None, .6], [None, None, None], [.6, None, 0]]


def row(id, question_type="what", quantifier=False, em=1.0, f1=1.0, probability=0.5, answer=(0, 0, 0),
        supporting=(0, 0, 0), query=(0, 0, 0), quantifier_share=None, jsd=JSD_A, removed=None, kept=None,
        completeness=(0.001, 0.002, 0.003), answer_pos=None, answer_attribution=None, answer_ceiling=None) -> dict:
    """A row as the runner writes it (rcqa.dataset.rows.SCHEMA), with only what the test sets being meaningful."""
    return {"id": id, "title": "t", "question": f"question {id}", "question_type": question_type,
            "is_quantifier": quantifier, "prediction": "p", "explained_span": "p", "gold_answers": ["g"],
            "em": em, "f1": f1, "probability": probability, "n_windows": 1, "window": 0, "layers": LAYERS,
            "passage_words": ["a", "b"], "distribution": [[.5, .5]] * 3, "top_k": [[], [], []],
            "category_answer": list(answer), "category_supporting": list(supporting), "category_query": list(query),
            "answer_attribution": None if answer_attribution is None else list(answer_attribution),
            "answer_ceiling": None if answer_ceiling is None else list(answer_ceiling),
            **{f"pos_{g}": [100.0 if g == "entity" else 0.0] * 3 for g in GROUPS},
            "answer_pos": answer_pos, "quantifier_share": quantifier_share,
            "jsd_full": jsd, "jsd_topk_removed": removed or jsd, "jsd_topk_kept": kept or jsd,
            "completeness": list(completeness), "steps": [8, 8, 16], "seconds": 10.0}


HAND_ROWS = [
    row("a", answer=(0, 20, 60), supporting=(40, 40, 20), query=(60, 20, 0), em=1, f1=1, probability=.9,
        removed=[[0, .1, .05], [.1, 0, .1], [.05, .1, 0]], kept=[[0, .5, .3], [.5, 0, .2], [.3, .2, 0]],
        answer_pos={g: (100.0 if g == "entity" else 0.0) for g in GROUPS},
        answer_attribution=(10, 30, 50), answer_ceiling=(40, 40, 40)),
    row("b", question_type="how many", quantifier=True, answer=(20, None, 80), supporting=(20, None, 20),
        query=(40, None, 20), em=0, f1=.5, probability=.3, quantifier_share=[10, 30, 50], jsd=JSD_B,
        completeness=(0.004, 0.02, 0.001),
        answer_pos={g: (50.0 if g in ("entity", "verb") else 0.0) for g in GROUPS},
        answer_attribution=(20, None, 60), answer_ceiling=(20, None, 20)),
    row("c", question_type="who", answer=(10, 40, 70), supporting=(30, 30, 30), query=(50, 10, 10), em=0, f1=0,
        probability=.6, answer_attribution=(15, 20, 40), answer_ceiling=(60, 60, 60)),
]


# a manifest.json as written by hand: only the fields the aggregates read (no version, counts, extras or draws)
MANIFEST = {"model": {"name": "default", "fingerprint": "abc"},
            "analysis": {"preset": "default", "settings": {"steps": 8}, "aggregation": "l2", "top_k": 5},
            "data": {"path": "dev.json", "sha256": "0" * 64, "limit": 3},
            "failed": [{"id": "d", "reason": "too long"}],
            "runs": [{"started": "2026-11-30T10:00:00+00:00", "finished": "2026-11-30T10:00:30+00:00", "computed": 2,
                      "failed": 1},
                     {"started": "2026-11-30T11:00:00+00:00", "finished": "2026-11-30T11:00:10+00:00", "computed": 1,
                      "failed": 0},
                     {"started": "2026-11-30T12:00:00+00:00", "finished": None, "computed": 0, "failed": 0}]}


def write_run(folder, rows, manifest=MANIFEST):
    folder.mkdir(parents=True)
    (folder / store.SHARDS).mkdir()
    store.write_shard(folder, rows[:2])
    store.write_shard(folder, rows[2:])
    write_manifest_json(folder, manifest)
    return folder


def write_manifest_json(folder, manifest: dict) -> None:
    """The manifest.json of a hand-made run, as JSON: the runner's typed manifest must read it."""
    (folder / store.MANIFEST).write_text(json.dumps(manifest))


# rows written before the sentence columns, whose layer roles by sentence are read from their word shares: one passage
# of three sentences, "The cat sat on the mat." (words 0-6), "The dog ran home at noon." (7-13) and "A bird sang in
# the garden." (14-20), each layer's share of each sentence put on its words by hand
PASSAGE = "The cat sat on the mat. The dog ran home at noon. A bird sang in the garden."
WORDS = ["The", "cat", "sat", "on", "the", "mat", ".", "The", "dog", "ran", "home", "at", "noon", ".", "A", "bird",
         "sang", "in", "the", "garden", "."]


def shares_on_words(by_sentence: list[list[float]]) -> list[list[float]]:
    """Per layer, the word shares giving each sentence its share: on "cat"; half on "dog", half on "noon"; on
    "garden"."""
    layers = []
    for first, second, third in by_sentence:
        words = [0.0] * len(WORDS)
        words[1], words[8], words[12], words[19] = first, second / 2, second / 2, third
        layers.append(words)
    return layers


def word_share_row(id, question, span, by_sentence, question_type="what", n_windows=1) -> dict:
    return {**row(id, question_type=question_type), "question": question, "passage": PASSAGE, "explained_span": span,
            "passage_words": WORDS, "distribution": shares_on_words(by_sentence), "n_windows": n_windows}


# w1: "noon" is in the second sentence; of the question's words ("when", "did", "the" are stopwords) "dog" is in the
# answer's sentence and "garden" in the third, so per layer answer, question, other are the 2nd, 3rd and 1st share.
# w2: "cat" is in the first sentence, and so are "sat" and "mat": no other sentence shares a question word
WORD_SHARE_ROWS = [
    word_share_row("w1", "When did the dog leave the garden?", "noon", [[.2, .5, .3], [.5, .3, .2], [.1, .8, .1]]),
    word_share_row("w2", "Who sat on the mat?", "cat", [[.3, .3, .4], [.6, .2, .2], [.9, .05, .05]],
                   question_type="who"),
    word_share_row("w3", "Who sat?", "The", [[.2, .5, .3]] * 3),  # "The" twice in the passage: left out
    word_share_row("w4", "Who ran?", "dog", [[.2, .5, .3]] * 3, n_windows=2),  # several windows: left out
]
# the means over w1 and w2 per layer (embeddings, block 0, block 1), worked out from the shares above
WORD_SHARE_MEANS = {"answer_sentence": [(.5 + .3) / 2, (.3 + .6) / 2, (.8 + .9) / 2],
                    "question_sentences": [.3 / 2, .2 / 2, .1 / 2],
                    "other_sentences": [(.2 + .7) / 2, (.5 + .4) / 2, (.1 + .1) / 2],
                    "top_is_answer": [(1 + 0) / 2, (0 + 1) / 2, (1 + 1) / 2]}
