"""The Dataset page: a run's aggregates under filters, two runs compared, and an example opened in Explore with
the run's own explanation (nothing recomputed)."""
import json
import os
import re
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from rcqa.cli import main
from rcqa.gallery import gallery_example
from rcqa.dataset.kept_summary import KEPT, keep_summary
from rcqa.dataset.sentence_roles import NEEDS_RUN, NOT_KEPT, UNDER_FILTER
from tests.helpers.app_harness import open_app, open_tab, plotly_specs, spec_titled, texts, values
from tests.helpers.squad_files import squad_json
from tests.helpers.hand_runs import HAND_ROWS, WORD_SHARE_MEANS, WORD_SHARE_ROWS, write_run

pytestmark = pytest.mark.usefixtures("app_env")
PAGE = "pages/dataset.py"
ABSTAINED = (True, False, True)  # of HAND_ROWS a, b, c


@pytest.fixture(scope="module")
def runs_folder(tmp_path_factory, tiny_model_dirs):
    """A hand-made run (values worked out by hand in test_dataset_report) and a real run of the tiny model."""
    root = tmp_path_factory.mktemp("runs")
    write_run(root / "hand", HAND_ROWS)
    write_run(root / "with-abstentions", [{**r, "abstained": abstained} for r, abstained in zip(HAND_ROWS, ABSTAINED)])
    data = root / "gallery.json"
    data.write_text(json.dumps(squad_json([gallery_example("lighthouse-who"), gallery_example("orchard-how-many")])))
    assert main(["reproduce", "--data", str(data), "--out", str(root / "tiny"), "--model", tiny_model_dirs["bert"],
                 "--tolerance", "0", "--workers", "1"]) == 0
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("RCQA_RUNS", str(root))
        yield root


def metrics(app) -> dict[str, str]:
    return {m.label: m.value for m in app.metric}


def choose_run(app, folder):
    app.selectbox(key="rcqa.dataset.run").set_value(str(folder.resolve())).run()
    assert not app.exception, [e.value for e in app.exception]
    return app


def test_a_run_with_its_numbers_and_filters(runs_folder):
    app = choose_run(open_app(PAGE), runs_folder / "hand")
    assert metrics(app) == {"Examples": "3", "Exact match": "33.3", "F1": "50.0", "Quantifier questions": "1",
                            "Worst median completeness error": "0.30 %"}
    titles = [s["layout"]["title"]["text"] for s in plotly_specs(app)]
    assert titles[0] == "What the top-5 words of each layer are, over the dataset"
    roles = plotly_specs(app)[0]
    answer = next(t for t in roles["data"] if t.get("name") == "answer: hand (default)")
    assert values(answer["y"]) == pytest.approx([10, 30, 70])  # b is undefined at block 0: mean of a and c
    conclusions = app.table[0].value  # a static table: every cell whole
    assert conclusions.holds.tolist() == [True, True, True, True]

    app.selectbox(key="rcqa.dataset.question_type").set_value("who").run()
    assert metrics(app)["Examples"] == "1" and metrics(app)["Exact match"] == "0.0"
    app.selectbox(key="rcqa.dataset.question_type").set_value("any").run()
    app.selectbox(key="rcqa.dataset.correct").set_value("right (exact match)").run()
    assert metrics(app)["Examples"] == "1" and metrics(app)["Exact match"] == "100.0"
    app.selectbox(key="rcqa.dataset.quantifier").set_value("quantifier questions (how many / much)").run()
    assert "No example of this run matches the filter." in texts(app.warning)


def test_two_runs_compared(runs_folder):
    app = choose_run(open_app(PAGE), runs_folder / "hand")
    app.selectbox(key="rcqa.dataset.compare").set_value(str((runs_folder / "tiny").resolve())).run()
    assert not app.exception
    assert set(app.table[0].value.run) == {"hand (default)", "tiny (default)"}
    names = {t.get("name") for t in plotly_specs(app)[0]["data"]}
    assert {"answer: hand (default)", "answer: tiny (default)"} <= names


def test_an_example_opens_in_explore_with_the_runs_explanation(runs_folder):
    app = choose_run(open_app(PAGE), runs_folder / "tiny")
    table = app.dataframe[-1].value
    assert sorted(table.id) == ["lighthouse-who", "orchard-how-many"]
    app.session_state["rcqa.dataset.examples"] = {"selection": {"rows": [table.id.tolist().index("orchard-how-many")],
                                                                "columns": [], "cells": []}}
    app.run()
    app.button(key="rcqa.dataset.open").click().run()
    assert not app.exception, [e.value for e in app.exception]
    view = app.session_state["rcqa.view"]
    assert (view.source, view.example_id, view.question) == ("upload", "orchard-how-many",
                                                             gallery_example("orchard-how-many").question)
    assert (view.rule, view.steps, view.tolerance, view.baseline) == ("gausslegendre", 8, None, "pad")
    # shown from the run: no button to press, and nothing was computed into the app's result cache
    assert "rcqa.explain" not in [button.key for button in app.button]
    assert not list(Path(os.environ["RCQA_RESULT_CACHE"]).glob("*.npz"))
    heatmap = spec_titled(app, "Where each layer's attribution goes")["data"][0]
    assert heatmap["y"] == ["embeddings", "block 0", "block 1", "block 2"]


def test_a_run_whose_manifest_is_broken_is_left_out_with_a_note(runs_folder, tmp_path, monkeypatch):
    broken = tmp_path / "broken-run"
    broken.mkdir()
    (broken / "manifest.json").write_text('{"model": ')  # a writer that died mid-write, or a full disk
    monkeypatch.setenv("RCQA_RUNS", os.pathsep.join([str(broken), str(runs_folder / "hand")]))
    app = open_app(PAGE)
    assert "broken-run" in texts(app.caption)
    assert metrics(app)["Examples"] == "3"  # the readable run is shown


def test_a_run_with_abstentions_splits_its_layer_roles_and_filters_by_them(runs_folder):
    plain = choose_run(open_app(PAGE), runs_folder / "hand")
    assert "rcqa.dataset.abstained" not in [box.key for box in plain.selectbox]
    assert not any("answered and abstained" in s["layout"]["title"]["text"] for s in plotly_specs(plain))

    app = choose_run(open_app(PAGE), runs_folder / "with-abstentions")
    split = spec_titled(app, "What the top-5 words of each layer are, over the dataset: answered and abstained")
    lines = {t["name"]: values(t["y"]) for t in split["data"] if t.get("mode") == "lines+markers"}
    # by hand: b alone was answered (undefined at block 0); a and c abstained
    answered = lines["answer: with-abstentions (default), answered (1)"]
    assert answered[0] == 20 and (answered[1] is None or np.isnan(float(answered[1])))
    assert lines["answer: with-abstentions (default), abstained (2)"] == pytest.approx([5, 30, 65])
    app.selectbox(key="rcqa.dataset.abstained").set_value("abstained (no answer)").run()
    assert metrics(app)["Examples"] == "2"
    (table,) = [frame.value for frame in app.dataframe if "id" in frame.value.columns]
    assert set(table.id) == {"a", "c"}
    app.selectbox(key="rcqa.dataset.abstained").set_value("answered").run()
    assert metrics(app)["Examples"] == "1"


def test_public_mode_names_no_path_of_a_runs_model_or_data(runs_folder, tiny_model_dirs, tmp_path, monkeypatch):
    from tests.helpers.hand_runs import MANIFEST

    elsewhere = write_run(tmp_path / "runs" / "elsewhere", HAND_ROWS,
                          {**MANIFEST, "data": {**MANIFEST["data"], "path": "/srv/secret/dev.json"}})
    monkeypatch.setenv("RCQA_RUNS", os.pathsep.join([str(runs_folder), str(elsewhere)]))
    monkeypatch.setenv("RCQA_PUBLIC", "1")
    app = open_app(PAGE)
    labels = app.selectbox(key="rcqa.dataset.run").options
    assert "tiny (default): 2 examples, model bert" in labels  # before: the model folder's path
    assert not any(str(Path(tiny_model_dirs["bert"]).parent) in label for label in labels)
    choose_run(app, elsewhere)
    app.session_state["rcqa.dataset.examples"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    app.run()
    app.button(key="rcqa.dataset.open").click().run()
    assert texts(app.error) == ("The run's data file dev.json is not on this machine, so its passages cannot be "
                                "shown.")  # before: /srv/secret/dev.json


ROLES = ("the answer's sentence", "sentences sharing a question word", "the other sentences",
         "the top sentence is the answer's")


def sentences_tab(app) -> tuple[str, str, dict[str, np.ndarray]]:
    """The Sentences tab's sentence, the caption saying where its numbers come from (both as shown), and the figure's
    lines by name; the sentence's numbers checked against the lines' at the first and the last layer."""
    spec = spec_titled(app, "Which sentence does each layer rest on?")
    drawn = {trace["name"]: values(trace["y"]) for trace in spec["data"]}
    sentence = next(m.value for m in app.markdown if "on the answer's sentence" in m.value).strip("*").replace("\\", "")
    source = next(c.value for c in app.caption if "are read by sentence" in c.value).replace("\\", "")
    quoted = [float(x) for x in re.findall(r"(\d+(?:\.\d+)?) %", sentence)]
    assert quoted == pytest.approx([round(drawn[name][layer], 1) for name in ROLES for layer in (0, -1)])
    table = app.dataframe[0].value
    assert table.layer.tolist() == list(spec["data"][0]["x"]) and list(table.columns[1:]) == list(ROLES)
    return sentence, source, drawn


def test_the_sentences_tab_says_what_its_table_and_the_runs_rows_hold(runs_folder):
    """The tiny run's rows keep their sentence scores: the tab's sentence quotes the figure's numbers, and the answer's
    share at the embeddings is the mean over the rows of the share of the sentence each row explains."""
    app = open_tab(choose_run(open_app(PAGE), runs_folder / "tiny"), "Sentences", key="rcqa.dataset_tabs")
    sentence, source, _ = sentences_tab(app)
    rows = pq.read_table(runs_folder / "tiny" / "shards").to_pylist()
    by_hand = np.mean([row["sentence_share"][0][row["sentence_explained"]] for row in rows])
    assert sentence.startswith(f"Over {len(rows)} questions, the share of each layer's attribution over the passage "
                               f"on the answer's sentence is {100 * by_hand:.1f} % at embeddings")
    assert source == (f"Of {len(rows)} questions, {len(rows)} are read by sentence, all from the sentence scores their "
                      "rows keep.")


@pytest.fixture(scope="module")
def older_runs(tmp_path_factory):
    """Runs written before the rows kept sentence scores (tests.helpers.hand_runs.WORD_SHARE_ROWS): one whose runner
    kept its summary, and one without (as after an edit to the code that summarises)."""
    root = tmp_path_factory.mktemp("older")
    keep_summary(write_run(root / "kept", WORD_SHARE_ROWS))
    write_run(root / "unkept", WORD_SHARE_ROWS)
    return root


def test_the_sentences_tab_of_a_run_before_sentence_scores_reads_its_kept_word_shares(older_runs, monkeypatch):
    """The kept summary's section: the tab's sentence quotes the figure, whose lines are the hand-worked means, and its
    caption says what was read from what and what was left out. Under a filter, and without a kept summary, the tab
    says why there is no section in one sentence each."""
    monkeypatch.setenv("RCQA_RUNS", str(older_runs))
    app = open_tab(choose_run(open_app(PAGE), older_runs / "kept"), "Sentences", key="rcqa.dataset_tabs")
    sentence, source, drawn = sentences_tab(app)
    for name, means in zip(ROLES, WORD_SHARE_MEANS.values()):
        assert drawn[name] == pytest.approx([100 * mean for mean in means], abs=1e-9), name
    assert sentence.startswith("Over 2 questions, the share of each layer's attribution over the passage on the "
                               "answer's sentence is 40.0 % at embeddings and 85.0 % at block 1")
    assert source == ("Of 4 questions, 2 are read by sentence, all from their word shares summed by sentence (rows "
                      "written before sentence scores were kept); 2 are left out: 1 (explained span absent or "
                      "repeated), 1 (passage read in several windows).")

    app.selectbox(key="rcqa.dataset.question_type").set_value("who").run()
    assert texts(app.info) == UNDER_FILTER
    assert not [s for s in plotly_specs(app) if s["layout"]["title"]["text"].startswith("Which sentence")]
    unkept = open_tab(choose_run(open_app(PAGE), older_runs / "unkept"), "Sentences", key="rcqa.dataset_tabs")
    assert not (older_runs / "unkept" / KEPT).exists() and texts(unkept.info) == NOT_KEPT


def test_a_run_without_sentence_scores_says_it_needs_a_new_run(runs_folder):
    app = open_tab(choose_run(open_app(PAGE), runs_folder / "hand"), "Sentences", key="rcqa.dataset_tabs")
    assert NEEDS_RUN in texts(app.info)
    assert not [s for s in plotly_specs(app) if s["layout"]["title"]["text"].startswith("Which sentence")]
