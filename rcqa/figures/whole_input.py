"""The whole input at a glance: an overview of a long passage page by page above the paged heatmap, and the start
and end attributions apart where a result holds both."""
from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rcqa.figures.common import Chart, apply_layout, blocks, colour_scale, coverage, escape_label, signed, word_ticks
from rcqa.figures.printed import CHARACTER
from rcqa.figures.words import PAGE_WORDS, word_table
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution


OVERVIEW_PAGES = 3  # a passage of one or two pages reads whole in the heatmap's slider: no overview above it


def needs_overview(words: int) -> bool:
    """Whether a heatmap of this many words gets the whole-passage overview above it: from OVERVIEW_PAGES pages of
    PAGE_WORDS words on."""
    return words > (OVERVIEW_PAGES - 1) * PAGE_WORDS


def overview_table(result: Attribution, k: int = 3, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0,
                   page_words: int = PAGE_WORDS) -> pd.DataFrame:
    """One row per layer and block of passage words (in text order, at most page_words each, as many as the
    heatmap's view, their sizes as equal as can be: common.blocks): the block's share of the layer's |attribution|
    (%), its signed share (each word's share with its score's sign, summed: the same for a magnitude), and its k
    words with the largest shares there (signed under a signed token score)."""
    table = word_table(result, aggregation, target)
    parts = blocks(int(table.position.max()) + 1, page_words)
    block = np.repeat(np.arange(len(parts)), [len(part) for part in parts])  # each word's block
    table = table.assign(page=block[table.position], signed_share_pct=np.sign(table.score) * table.share_pct)
    shown = "{:+.1f}%" if signed(aggregation) else "{:.1f}%"
    rows = []
    for (layer, page), part in table.groupby(["layer", "page"], sort=True):
        best = part[part.share_pct > 0].nlargest(k, "share_pct")
        rows.append({"layer": layer, "layer_label": result.layers[layer], "page": page + 1,
                     "first_word": int(part.position.min()) + 1, "last_word": int(part.position.max()) + 1,
                     "share_pct": float(part.share_pct.sum()), "signed_share_pct": float(part.signed_share_pct.sum()),
                     "top_words": ", ".join(f"{w} ({shown.format(s)})"
                                            for w, s in zip(best.word, best.signed_share_pct))})
    return pd.DataFrame(rows)


LABEL_FONT = 10
LINE = 1.3  # a line of a label, in its font's size (Plotly's line spacing)
# the overview's labels are fitted to cells of a chart this wide (px), narrower than Explore draws it in a window
# 1,280 px wide or wider (about 900 px in a 1,400-px window): there, and in an image (1,200 px), they have room to spare
FITTED_WIDTH = 760
SCALE_PX = 100  # the colour bar, its numbers and its title, right of the cells


def passage_overview(result: Attribution, k: int = 3, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0,
                     page_words: int = PAGE_WORDS) -> Chart:
    """Layers × blocks of the heatmap's words: how much of each layer's attribution falls on each block of about
    page_words passage words, each cell naming its block's top-k words there (as many as fit in it, one a line: a
    label never overlaps another), so that a long passage reads at a glance before paging. Its title says what it
    covers: the whole passage, or the one window of it the result explains."""
    data = overview_table(result, k, aggregation, target, page_words)
    pages = int(data.page.max())
    shape = (len(result.layers), pages)
    columns = [f"words {first}–{last}" for first, last in
               data[data.layer == 0][["first_word", "last_word"]].itertuples(index=False)]
    words = np.array([escape_label(text) for text in data.top_words]).reshape(shape)
    share = data.signed_share_pct.to_numpy().reshape(shape)
    figure = go.Figure(go.Heatmap(
        z=share, x=columns, y=result.layers, customdata=words, **colour_scale(aggregation, share),
        hovertemplate=f"%{{x}} at %{{y}}: %{{z:{'+' if signed(aggregation) else ''}.1f}}% of the layer<br>"
                      "top: %{customdata}<extra></extra>"))
    figure.update_yaxes(autorange="reversed", type="category")
    covered = coverage(result)
    numbered = "" if covered == "the whole passage" else ", numbered from the window's first"
    apply_layout(figure, f"{covered[0].upper()}{covered[1:]} at a glance: each block's "
                 f"{'signed ' if signed(aggregation) else ''}share of a layer, and its top-{k} words",
                 f"Blocks of at most {page_words} passage words in text order{numbered} (the heatmap below shows "
                 f"{page_words} at a time); hover a cell for its words",
                 "Block of passage words", "Layer (embeddings at the top)",
                 height=max(320, 30 * len(result.layers) + 200))
    figure.update_traces(text=fitted_labels(figure, words), texttemplate="%{text}",
                         textfont={"size": LABEL_FONT})
    return Chart(f"overview-{result.example.id}", data, figure)


def fitted_labels(figure: go.Figure, top_words: np.ndarray) -> np.ndarray:
    """Each cell's label: its top words one a line, as many as fit in the cell as drawn FITTED_WIDTH wide (a word
    is CHARACTER of the font's size a character at most), none where not even the first fits."""
    layout = figure.layout
    rows, columns = top_words.shape
    cell_width = (FITTED_WIDTH - layout.margin.l - layout.margin.r - SCALE_PX) / columns
    most_lines = int((layout.height - layout.margin.t - layout.margin.b) / rows // (LINE * LABEL_FONT))
    labels = np.full(top_words.shape, "", dtype=object)
    for cell, words in np.ndenumerate(top_words):
        lines = [line for line in words.split(", ") if line][:most_lines]
        fitting = list(itertools.takewhile(lambda line: len(line) * CHARACTER * LABEL_FONT <= cell_width, lines))
        labels[cell] = "<br>".join(fitting)
    return labels


def start_end_targets(result: Attribution) -> tuple[int, int] | None:
    """The indices of a start_logit and an end_logit target at the same span, if the result holds both."""
    names = [chosen.name for chosen in result.targets]
    if "start_logit" not in names or "end_logit" not in names:
        return None
    start, end = names.index("start_logit"), names.index("end_logit")
    same = result.targets[start].tokens == result.targets[end].tokens
    return (start, end) if same else None


def start_end(result: Attribution, aggregation: Aggregation = DEFAULT_AGGREGATION, with_sum: bool = True) -> Chart | None:
    """Layers × passage words for the start logit and for the end logit apart, and (with_sum) their sum (the span's
    logits joined), each as shares of its layer, on one word axis; None when the result does not hold both targets.
    The dashboard leaves the sum out: its joined view is the heatmap of the target as chosen."""
    found = start_end_targets(result)
    if found is None:
        return None
    start, end = (word_table(result, aggregation, target) for target in found)
    joined_scores = start.score + end.score
    layers = start.layer.to_numpy()
    totals = pd.Series(np.abs(joined_scores)).groupby(layers).transform("sum").to_numpy()
    joined = 100 * np.divide(np.abs(joined_scores), totals, out=np.zeros(len(totals)), where=totals > 0)
    data = start[["layer", "layer_label", "position", "word"]].assign(
        start_share_pct=start.share_pct, end_share_pct=end.share_pct, joined_share_pct=joined)
    shape = (len(result.layers), len(data) // len(result.layers))
    rows = {"start_share_pct": ("Start logit", start.score), "end_share_pct": ("End logit", end.score),
            **({"joined_share_pct": ("Start + end logit (joined)", joined_scores)} if with_sum else {})}
    drawn = {column: (np.sign(scores) * data[column]).to_numpy().reshape(shape)  # signed under a signed score
             for column, (_, scores) in rows.items()}
    colours = colour_scale(aggregation, np.stack(list(drawn.values())))
    figure = make_subplots(rows=len(rows), cols=1, shared_xaxes=True, vertical_spacing=0.06,
                           subplot_titles=tuple(name for name, _ in rows.values()))
    for row, column in enumerate(rows, 1):
        figure.add_heatmap(z=drawn[column], x=list(range(shape[1])), y=result.layers,
                           customdata=np.array([escape_label(w) for w in data.word]).reshape(shape), **colours,
                           showscale=row == 1, hovertemplate="<b>%{customdata}</b> at %{y}: %{z:.2f}%<extra></extra>",
                           row=row, col=1)
    figure.update_yaxes(autorange="reversed", type="category")
    word_ticks(figure, [escape_label(word) for word in data.word[:shape[1]]], row=len(rows), col=1)
    joined_note = (" · joined: the two targets' token scores added (span_logits' own, by IG's linearity, for the "
                   "signed-sum token score; for a norm, the sum of the two norms)") if with_sum else ""
    apply_layout(figure, "Start and end apart: where each logit's attribution goes",
                 f"Span “{escape_label(result.targets[found[0]].span)}” · each layer's shares per passage word of "
                 f"{coverage(result)}{joined_note}", "", "",
                 height=len(rows) * max(200, 22 * len(result.layers) + 60) + 160, subplot_titles=True)
    return Chart(f"start-end-{result.example.id}", data, figure)


def start_end_reading(data: pd.DataFrame) -> str:
    """Sentences from start_end's data: the word each logit's attribution rests on most at the last layer, with its
    share, and the layers over which that word is on top (from the layer where the model settles on its start or
    end); then why the last layer alone says little."""
    start, start_since = _settled(data, "start_share_pct")
    end, end_since = _settled(data, "end_share_pct")
    labels = data.drop_duplicates("layer").sort_values("layer").layer_label.tolist()
    since = {name: _since(index, labels) for name, index in (("start", start_since), ("end", end_since))}
    if start.position == end.position:
        reading = (f"At the last layer ({start.layer_label}) the start and the end logit both rest most on "
                   f"“{start.word}” ({start.start_share_pct:.0f}% and {end.end_share_pct:.0f}% of their "
                   "attribution). "
                   + (f"It is the top word of both {since['start']}." if start_since == end_since else
                      f"It is the start logit's top word {since['start']} and the end logit's {since['end']}."))
    else:
        reading = (f"At the last layer ({start.layer_label}) the start logit rests most on “{start.word}” "
                   f"({start.start_share_pct:.0f}% of its attribution), the end logit on “{end.word}” "
                   f"({end.end_share_pct:.0f}%). “{start.word}” is the start logit's top word {since['start']}, "
                   f"“{end.word}” the end logit's {since['end']}.")
    return reading + " " + LAST_LAYER_CAVEAT


# the QA head reads each token's last-layer state alone, so that layer's attribution of a logit lies on its own token
LAST_LAYER_CAVEAT = ("At the last layer each logit rests on its own token by construction (the QA head reads each "
                     "token apart); the layers before it show where the model settles.")


def _since(index: int, labels: list[str]) -> str:
    """The layers over which a word is on top, in words: from labels[index] to the last."""
    if index == 0:
        return "at every layer"
    return "at the last layer only" if index == len(labels) - 1 else f"from {labels[index]} on"


def _settled(data: pd.DataFrame, column: str) -> tuple[pd.Series, int]:
    """The last layer's top word for `column` (its row, the last layer's), and the index (among the layers, in order)
    of the first layer from which it stays the top."""
    tops = data.loc[data.groupby("layer")[column].idxmax()].sort_values("layer")
    top = tops.iloc[-1]
    since = len(tops) - 1
    while since > 0 and tops.position.iloc[since - 1] == top.position:
        since -= 1
    return top, since


def start_end_completeness(result: Attribution) -> dict[str, float] | None:
    """The start and the end logit's worst relative completeness error over the layers, by target name; None when
    the result does not hold both targets."""
    if start_end_targets(result) is None:
        return None
    return {name: max(c.relative_error for c in result.completeness if c.target == name)
            for name in ("start_logit", "end_logit")}
