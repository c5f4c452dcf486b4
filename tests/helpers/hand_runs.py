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
