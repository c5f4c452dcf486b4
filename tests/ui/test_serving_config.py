"""The server's shipped settings: loopback only, no error details for visitors, uploads the size of a dev file."""
import tomllib
from pathlib import Path

import streamlit.config

CONFIG = tomllib.loads((Path(__file__).parents[2] / ".streamlit" / "config.toml").read_text())
SQUAD_DEV_MB = 4_854_279 / 1e6  # dev-v1.1.json, the largest dev file a visitor is expected to bring


def test_the_server_listens_on_loopback_only():
    assert CONFIG["server"]["address"] == "127.0.0.1"


def test_no_full_collection_holds_every_page_after_each_script_run():
    # Streamlit's default collects every generation after each run, 1.1-1.4 s of the interpreter lock with the
    # model loaded (docs/serving.md: Where a new visitor's time goes); the option must exist to be turned off
    assert CONFIG["runner"]["postScriptGC"] is False
    assert "runner.postScriptGC" in streamlit.config._config_options_template


def test_visitors_see_no_error_details():
    option = streamlit.config._config_options_template["client.showErrorDetails"]
    assert CONFIG["client"]["showErrorDetails"] == "none" and "none" in option.description


def test_uploads_fit_a_dev_file_and_little_more():
    assert SQUAD_DEV_MB < CONFIG["server"]["maxUploadSize"] <= 2 * SQUAD_DEV_MB


# --- server.maxMessageSize: what the largest figure needs (docs/serving.md: Serving to strangers) --------------------

MAX_LAYERS = 25  # BERT-large's 24 blocks and the embeddings: the deepest model the limit is sized for
# a word's character in a figure's JSON at most: plotly writes '/' as \u002f, a control character as \u0001
BYTES_PER_CHARACTER = 6
MARK = "Zqxvw"  # a word found nowhere else in the passage: its copies in a figure's JSON are each word's


def whole_passage_figures(tiny_model, copies: int) -> dict[str, tuple[int, int, int, int, int]]:
    """The two largest figures of a whole passage (the heatmap with the question and [CLS]/[SEP], and the start and
    end logits apart) for the canal passage `copies` times over, explained whole by the tiny BERT: per figure, the
    bytes of its JSON as st.plotly_chart sends it, its layers, its columns (words), the bytes of their labels, and
    how many times each label is written."""
    import plotly.io

    from rcqa.attribution.explanation import explain
    from rcqa.attribution.settings import ExplainSettings
    from rcqa.figures.common import escape_label
    from rcqa.figures.whole_input import start_end
    from rcqa.figures.words import heatmap
    from rcqa.gallery import gallery_example
    from rcqa.types import Example

    canal = gallery_example("canal-long")
    example = Example(id="long", question=canal.question, passage=" ".join([canal.passage] * copies) + f" {MARK}.")
    result = explain(tiny_model, example, ExplainSettings(targets=("start_logit", "end_logit"), rule="riemann_right",
                                                     steps=1, tolerance=None, windows="all"))
    figures = {"heatmap": heatmap(result, include_question=True, include_special=True),
               "start and end": start_end(result, with_sum=False)}
    found = {}
    for name, chart in figures.items():
        sent = plotly.io.to_json(chart.figure, validate=False)  # what st.plotly_chart puts in its message
        words = chart.data[chart.data.layer == 0].word
        found[name] = (len(sent.encode()), len(result.layers), len(words),
                       sum(len(escape_label(word).encode()) for word in words), sent.count(MARK))
    return found


def largest_message_bytes(tiny_model) -> float:
    """The largest figure the app can send, from two measured ones: each figure's bytes are a constant (layout and
    template), a share per layer and column (the cell's number, rank, category and score), and its labels written
    `copies` times (once per layer per heatmap, and once under the axis). Solved from the canal passage once and
    twice over, then sized for MAX_LAYERS layers, the longest passage and question (rcqa.qa's limits; 3 special
    tokens a window) and every label character costing BYTES_PER_CHARACTER."""
    from rcqa import qa

    once, twice = whole_passage_figures(tiny_model, 1), whole_passage_figures(tiny_model, 2)
    columns = qa.MAX_PASSAGE_WORDS + qa.MAX_QUESTION_WORDS + 3 * qa.MAX_WINDOWS
    characters = qa.MAX_PASSAGE_CHARS + qa.MAX_QUESTION_CHARS
    largest = 0.0
    for name in once:
        (size1, layers, words1, labels1, copies), (size2, _, words2, labels2, _) = once[name], twice[name]
        per_cell = (size2 - size1 - copies * (labels2 - labels1)) / (layers * (words2 - words1))
        constant = size1 - per_cell * layers * words1 - copies * labels1
        copies_at_most = (copies - 1) / layers * MAX_LAYERS + 1
        largest = max(largest, constant + per_cell * MAX_LAYERS * columns
                      + copies_at_most * BYTES_PER_CHARACTER * characters)
    return largest


def test_the_message_limit_holds_the_largest_figure_with_a_margin_and_no_more(tiny_bert):
    largest = largest_message_bytes(tiny_bert)
    default = streamlit.config._config_options_template["server.maxMessageSize"].default_val  # 200 MB
    limit = CONFIG["server"].get("maxMessageSize", default) * 1e6  # MB as Streamlit counts them (runtime_util)
    assert 1.2 * largest <= limit <= 2 * largest, (largest / 1e6, limit / 1e6)
