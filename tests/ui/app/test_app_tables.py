"""Tables (the data grid) and choices on a page never carry a bidirectional control from a visitor's text: a grid
cell is plain text, where no HTML isolate can hold an override, so every table goes through rcqa.ui.show.table."""
import ast
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from rcqa.text import BIDI_CONTROLS
from rcqa.ui.show import shown_cells
from tests.helpers.app_harness import explain, open_app, open_tab

pytestmark = pytest.mark.usefixtures("app_env")
ROOT = Path(__file__).resolve().parents[3]
TABLE_CALLS = {"dataframe", "table", "data_editor"}  # Streamlit's: each draws a data grid or a table
# each word holds a right-to-left override, so that any span of the passage does
PASSAGE = " ".join(word[0] + "\u202e" + word[1:] for word in
                   "The lighthouse keeper Margaret Ellison lit the lamp every night from 1872 onwards .".split())


def controls_in(frame: pd.DataFrame) -> set[str]:
    text = " ".join(map(str, frame.columns)) + " ".join(map(str, frame.to_numpy().ravel()))
    return set(text) & set(BIDI_CONTROLS)


def test_a_table_s_text_cells_lose_their_bidi_controls_and_keep_everything_else():
    frame = pd.DataFrame({"answer\u2067": ["Ma\u202ergaret\u202c", "\u05e9\u05dc\u05d5\u05dd 2,300"],
                          "gold_answers": [np.array(["a\u200fb", "c"], dtype=object), ["\u2066d\u2069"]],
                          "probability": [0.25, 0.75], "window": [1, 2]})
    shown = shown_cells(frame)
    assert list(shown.columns) == ["answer", "gold_answers", "probability", "window"]
    assert shown["answer"].tolist() == ["Margaret", "\u05e9\u05dc\u05d5\u05dd 2,300"]  # Hebrew itself stays
    assert [list(cell) for cell in shown["gold_answers"]] == [["ab", "c"], ["d"]]
    assert shown["probability"].tolist() == [0.25, 0.75] and shown["window"].dtype == frame["window"].dtype
    assert "\u202e" in frame["answer\u2067"].iloc[0]  # the caller's frame is left as it was


def test_explore_s_tables_and_choices_of_a_pasted_passage_hold_no_bidi_control():
    app = open_app()
    app.radio(key="rcqa.widget.source").set_value("paste").run()
    app.text_area(key="rcqa.widget.passage").input(PASSAGE).run()
    app.text_input(key="rcqa.widget.question").input("Who lit the lamp?").run()
    open_tab(explain(app), "Answer lens").button(key="rcqa.ask.lens").click().run()
    assert not app.exception, [e.value for e in app.exception]
    (lens,) = [frame.value for frame in app.dataframe if "reader" in frame.value.columns]
    assert lens.span.str.len().min() > 0 and not controls_in(lens)
    words = [box for box in open_tab(app, "One word across layers").selectbox if box.label == "Passage word"]
    assert words and not set("".join(words[0].options)) & set(BIDI_CONTROLS)
    assert "Margaret" in "".join(words[0].options)  # the words are shown, in their stored order


def table_calls(path: Path) -> list[tuple[str, int, str]]:
    """(receiver, line, enclosing function) of every call drawing a table, e.g. st.dataframe(...)."""
    tree, found = ast.parse(path.read_text()), []

    def visit(node, function: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, child.name)
                continue
            if (isinstance(child, ast.Call) and isinstance(child.func, ast.Attribute)
                    and child.func.attr in TABLE_CALLS):
                found.append((ast.unparse(child.func.value), child.lineno, function))
            visit(child, function)

    visit(tree, "")
    return found


def test_every_table_on_a_page_goes_through_show_table():
    sources = [ROOT / "app.py", *sorted((ROOT / "rcqa" / "ui").rglob("*.py"))]
    calls = {(path.relative_to(ROOT).as_posix(), *call) for path in sources for call in table_calls(path)}
    direct = {call for call in calls if call[1] != "show"}
    assert {(path, receiver, function) for path, receiver, _, function in direct} == {
        ("rcqa/ui/show.py", "st", "table")}  # show.table's own st.dataframe
    assert any(receiver == "show" for _, receiver, _, _ in calls)  # the scan sees the pages' tables
    for path in sources:  # nor is a table function imported by name
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("streamlit"):
                assert not {alias.name for alias in node.names} & TABLE_CALLS, path
