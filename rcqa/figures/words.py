"""Where each layer's attribution goes, word by word: the heatmap, the top-k words in the passage, one word
across layers."""
from __future__ import annotations


import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rcqa.analysis.roles.categories import word_categories
from rcqa.analysis.words import group_scores, normalised, ranks
from rcqa.figures.common import (
    FONT,
    Chart,
    apply_layout,
    colour_scale,
    coverage,
    escape_label,
    escape_text,
    settings_line,
    signed,
    word_ticks,
)
from rcqa.figures.printed import Panel, printed_heatmaps
from rcqa.text import shortened
from rcqa.types import DEFAULT_AGGREGATION, Aggregation, Attribution, Word, overlaps

MARK = "230, 126, 34"  # RGB of the top-k highlight; rank 1 is the most opaque
# a heatmap of more words shows this many at a time, with a slider over the rest: at 1440 px, beside the controls,
# every one of them is labelled
PAGE_WORDS = 50
RANGE_SLIDER_HEIGHT = 80


def _word_order(result: Attribution, include_question: bool) -> list[int]:
    """Indices into result.words: question words first (if asked), then passage words, each in text order.
    Punctuation is no word."""
    chosen = [i for i, w in enumerate(result.words) if (w.segment == "passage" or include_question)
              and not w.is_punctuation]
    return sorted(chosen, key=lambda i: (result.words[i].segment != "question", result.words[i].start_char))


def _columns(result: Attribution, include_question: bool,
             include_special: bool) -> list[tuple[Word | str, tuple[int, ...]]]:
    """The heatmap's columns: (a word, or a special token's text such as [CLS], and its tokens). With the special
    tokens, the whole input in the order the model reads it: [CLS], the question, [SEP], the passage, [SEP]."""
    columns: list[tuple[Word | str, tuple[int, ...]]] = [(result.words[i], result.words[i].tokens)
                                                         for i in _word_order(result, include_question)]
    if include_special:
        columns += [(token, (i,)) for i, (token, segment) in enumerate(zip(result.tokens, result.token_segments))
                    if segment == "special"]
        columns.sort(key=lambda column: column[1][0])
    return columns


def word_table(result: Attribution, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0,
               include_question: bool = False, include_special: bool = False) -> pd.DataFrame:
    """One row per layer and word: its share of the layer's |attribution| among the shown words, rank, raw score.
    With include_special the special tokens ([CLS], where "no answer" is read, and [SEP]) are columns too.

    With passage words only, share is the paper's per-layer distribution I_l (in %)."""
    columns = _columns(result, include_question, include_special)
    scores = group_scores(result, [tokens for _, tokens in columns], aggregation, target)
    shares = normalised(scores)
    categories = dict(zip((result.words[i] for i in result.passage_indices()), word_categories_of(result, target)))
    layer_ranks = ranks(shares)
    rows = []
    for layer, label in enumerate(result.layers):
        for position, (word, _) in enumerate(columns):
            cells, category = _column_cells(word, categories)
            rows.append({"layer": layer, "layer_label": label, "position": position, **cells,
                         "share_pct": 100 * shares[layer, position], "rank": int(layer_ranks[layer, position]),
                         "score": float(scores[layer, position]), "category": category})
    return pd.DataFrame(rows)


def _column_cells(word: Word | str, categories: dict[Word, str]) -> tuple[dict, str]:
    """A column's text and place (a special token has no place) and its category."""
    if isinstance(word, str):
        return {"word": word, "segment": "special", "start_char": None, "end_char": None}, "special"
    return ({"word": word.text, "segment": word.segment, "start_char": word.start_char, "end_char": word.end_char},
            categories.get(word, "question"))


def word_categories_of(result: Attribution, target: int = 0) -> list[str]:
    """Per passage word, its paper categories joined by '+' ('answer+query'), or 'other'."""
    return [categories or "other" for categories in word_categories(result, target)]


def heatmap(result: Attribution, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0, include_question: bool = False,
            include_special: bool = False, focus_char: int | None = None) -> Chart:
    """Layers × words: how each layer's attribution is spread over the words (with include_question and
    include_special, over the whole input: [CLS], the question, [SEP], the passage, [SEP]). Under a signed token
    score each share carries its word's sign, on colours diverging around 0. A heatmap paged on the page exports
    (PNG, SVG) every word instead, printed_heatmaps' rows. A paged heatmap opens around the explained span, or, with
    `focus_char`, around the first passage word from that character of the passage on (a sentence jumped to)."""
    table = word_table(result, aggregation, target, include_question, include_special)
    words = table[table.layer == 0]
    shape = (len(result.layers), len(words))
    share = (np.sign(table.score) * table.share_pct).to_numpy().reshape(shape)  # a magnitude's sign is never −
    colours = colour_scale(aggregation, share)
    columns = [[escape_label(w) for w in table.word], table.layer_label, table["rank"], table.category,
               np.round(table.score, 5)]
    hover = np.stack([np.asarray(column).reshape(shape) for column in columns], axis=-1)
    shown_share = "signed share %{z:+.2f}%" if signed(aggregation) else "share %{z:.2f}%"
    figure = go.Figure(go.Heatmap(
        z=share, x=list(range(shape[1])), y=result.layers, customdata=hover, **colours,
        hovertemplate=(f"<b>%{{customdata[0]}}</b> at %{{customdata[1]}}<br>{shown_share} · rank %{{customdata[2]}}"
                       "<br>category: %{customdata[3]}<br>raw score %{customdata[4]}<extra></extra>"),
    ))
    labels = [escape_label(shortened(word)) for word in words.word]  # a 20,000-character word would squash the rows
    figure.update_yaxes(autorange="reversed", type="category")
    shown = ("question words, then passage words" if include_question else "passage words") + (
        ", with [CLS] and [SEP]" if include_special else "")
    around = (_position_from(words, focus_char) if focus_char is not None else
              0 if include_special else _span_position(result, words, target))  # [CLS] in view
    paged = page_axis(figure, labels, around)
    passage_from = (int(np.argmax(words.segment.to_numpy() == "passage"))
                    if include_question and (words.segment == "passage").any() else None)
    if passage_from is not None:
        _mark_passage_start(figure, passage_from)
    where = coverage(result) + (f", {result.answer.n_windows} windows" if result.whole_passage else "")
    title = "Where each layer's attribution goes, word by word"
    measured = ("Each word's signed share of the layer's total |attribution| (blue: for the target, red: against)"
                if signed(aggregation) else "Each word's share of the layer's total |attribution|")
    subtitle = f"{measured} · {settings_line(result, aggregation, target)} · {where}"
    window = "the whole passage" if result.whole_passage else "the analysed window"
    words_of = f"Words of {window} ({shown}, in text order"
    apply_layout(figure, title, subtitle, f"{words_of}{paged})", "Layer (embeddings at the top)",
                 height=max(360, 30 * len(result.layers) + 220) + (RANGE_SLIDER_HEIGHT if paged else 0))
    export = printed_heatmaps([Panel("Layer", share, colours)], labels, result.layers, title,
                              f"{subtitle} · {words_of}; all {len(labels)} words)", passage_from) if paged else None
    return Chart(f"heatmap-{result.example.id}", table, figure, export=export)


def _mark_passage_start(figure: go.Figure, first: int) -> None:
    """A line between the question's last word and the passage's first, labelled, above the heatmap."""
    figure.add_vline(x=first - 0.5, line={"color": "#c0392b", "width": 2})
    figure.add_annotation(x=first - 0.5, y=1, yref="paper", yanchor="bottom", text="question | passage",
                          showarrow=False, font={"size": 11, "color": "#c0392b"})


def _position_from(words: pd.DataFrame, char: int) -> int:
    """The column of the first passage word that starts at or after passage character `char` (the last if none)."""
    starts = [start if segment == "passage" else -1 for start, segment in zip(words.start_char, words.segment)]
    return next((position for position, start in enumerate(starts) if start >= char), len(starts) - 1)


def _span_position(result: Attribution, words: pd.DataFrame, target: int) -> int:
    """The column of the first word of the explained span (0 if no shown word is in it)."""
    start, end = result.explained_span(target)
    inside = np.flatnonzero([segment == "passage" and overlaps(a, b, start, end)
                             for a, b, segment in zip(words.start_char, words.end_char, words.segment)])
    return int(inside[0]) if len(inside) else 0


def page_axis(figure: go.Figure, labels: list[str], around: int, **where) -> str:
    """Word labels under the x axis (`where`: a subplot's row and col). A long axis shows PAGE_WORDS words at a
    time, labelled as the chart's width allows (word_ticks), with a range slider under it that scrolls over the whole
    passage (and shows all of it, small); it opens on the first word, or, where the word at `around` would lie past
    the first page's first three quarters, a quarter of a page before it. Returns what the axis title adds: how much
    shows and how to move, or nothing where every word shows."""
    word_ticks(figure, labels, **where)
    if len(labels) <= PAGE_WORDS:
        return ""
    first = 0 if around < PAGE_WORDS * 3 // 4 else min(around - PAGE_WORDS // 4, len(labels) - PAGE_WORDS)
    figure.update_xaxes(range=[first - 0.5, first + PAGE_WORDS - 0.5], rangeslider={"visible": True, "thickness": 0.08},
                        **where)
    return f"; {PAGE_WORDS} of its {len(labels)} words at a time: drag the slider below to scroll"


def topk_table(result: Attribution, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> pd.DataFrame:
    """Each layer's k most important passage words, best first; a word with no attribution is never among them."""
    table = word_table(result, aggregation, target)
    best = table[(table["rank"] <= k) & (table.share_pct > 0)].sort_values(["layer", "rank"])
    return best[["layer", "layer_label", "rank", "word", "share_pct", "category", "start_char", "end_char"]]


def _marked_passage(result: Attribution, marks: dict[int, tuple[int, float]]) -> str:
    """The analysed window's passage as HTML: marked words (passage word index → rank, share) highlighted, the
    explained span underlined. Every piece of passage text is escaped."""
    passage = result.example.passage
    shown = [w for w in result.words if w.segment == "passage"]  # punctuation too: it is text, if no word
    word_index = {w.start_char: i for i, w in enumerate(result.passage_words())}
    span_start, span_end = result.explained_span()
    max_rank = max((rank for rank, _ in marks.values()), default=1)
    pieces = ["… " if shown and shown[0].start_char > 0 else ""]
    cursor = shown[0].start_char if shown else 0
    for word in shown:
        pieces.append(escape_text(passage[cursor:word.start_char]))
        text = escape_text(word.text)
        if overlaps(span_start, span_end, word.start_char, word.end_char):
            text = f'<span style="border-bottom: 2px solid #d62728;">{text}</span>'
        if word_index.get(word.start_char) in marks:
            rank, share = marks[word_index[word.start_char]]
            opacity = 1.0 - 0.65 * (rank - 1) / max(max_rank - 1, 1)
            text = (f'<mark title="rank {rank} · {share:.1f}% of the layer" style="background: rgba({MARK}, '
                    f'{opacity:.2f}); padding: 1px 2px; border-radius: 3px;">{text}<sup>{rank}</sup></mark>')
        pieces.append(text)
        cursor = word.end_char
    pieces.append(" …" if shown and cursor < len(passage.rstrip()) else "")
    return "".join(pieces)


def _marks(result: Attribution, table: pd.DataFrame, layer: int) -> dict[int, tuple[int, float]]:
    """One layer's rows of a top-k table as passage word index → (rank, share)."""
    passage_index = {w.start_char: i for i, w in enumerate(result.passage_words())}
    rows = table[table.layer == layer]
    return {passage_index[int(r.start_char)]: (int(r["rank"]), float(r.share_pct)) for _, r in rows.iterrows()}


def _fewer_than_k(found: int, k: int) -> str:
    """A note for a layer with fewer than k words that have any attribution."""
    if found >= k:
        return ""
    return (f'<div style="color: #8a6d3b;">Only {found} passage word{"s" * (found != 1)} in this layer '
            f"{'has' if found == 1 else 'have'} any attribution, so it has {found} top words, not {k}.</div>")


def _topk_legend(result: Attribution, k: int) -> str:
    window = (f" Only the analysed window is shown: window {result.window + 1} of {result.answer.n_windows}, the one "
              "holding the explained span." if result.answer.n_windows > 1 and not result.whole_passage else "")
    return (f'<p style="font-size: 0.85em; color: #555;">Highlighted: the layer\'s top-{k} passage words (the number '
            f"is the rank; darker = more important). Underlined: the explained span ({escape_text(result.targets[0].span)}).{window}</p>")


def topk_passage(result: Attribution, layer: int, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """The passage with one layer's top-k words highlighted."""
    table = topk_table(result, k, aggregation, target)
    marks = _marks(result, table, layer)
    page = (f'<div style="{FONT}"><strong>{escape_text(result.layers[layer])}</strong>: top-{k} passage words'
            f"{_fewer_than_k(len(marks), k)}"
            f'<div style="white-space: pre-wrap;">{_marked_passage(result, marks)}</div>{_topk_legend(result, k)}</div>')
    return Chart(f"top{k}-{result.example.id}-{result.layers[layer].replace(' ', '')}",
                 table[table.layer == layer], html=page)


def topk_grid(result: Attribution, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """The passage once per layer, each with that layer's top-k words highlighted (the paper's qualitative view)."""
    table = topk_table(result, k, aggregation, target)
    rows = "".join(
        f'<tr><td style="vertical-align: top; padding: 6px 10px 6px 0; white-space: nowrap;"><strong>'
        f'{escape_text(label)}</strong></td><td style="padding: 6px 0; font-size: 0.9em; border-top: 1px solid #eee;">'
        f'{_fewer_than_k(len(marks), k)}{_marked_passage(result, marks)}</td></tr>'
        for layer, label in enumerate(result.layers) for marks in [_marks(result, table, layer)])
    page = (f'<div style="{FONT}"><table style="border-collapse: collapse;">{rows}</table>'
            f"{_topk_legend(result, k)}</div>")
    return Chart(f"top{k}-all-layers-{result.example.id}", table, html=page)


def topk_words(result: Attribution, k: int = 5, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """Each layer's top-k passage words as a table: a row per layer, a column per rank, each word with its share."""
    table = topk_table(result, k, aggregation, target)
    cells = [[f"{escape_label(r.word)} ({r.share_pct:.1f}%)" for r in table[table.layer == layer].itertuples()]
             for layer in range(len(result.layers))]
    columns = [[row[rank] if rank < len(row) else "" for row in cells] for rank in range(k)]
    figure = go.Figure(go.Table(header={"values": ["Layer", *(f"rank {rank + 1}" for rank in range(k))]},
                                cells={"values": [[escape_label(label) for label in result.layers], *columns],
                                       "align": "left"}))
    apply_layout(figure, f"Each layer's top-{k} passage words, with their share of the layer",
                 settings_line(result, aggregation, target), "", "", height=max(300, 30 * len(result.layers) + 160))
    return Chart(f"top{k}-words-{result.example.id}", table, figure)


def word_choices(result: Attribution) -> list[str]:
    """Labels for choosing a passage word: 'word (#position)'."""
    return [f"{w.text} (#{i + 1})" for i, w in enumerate(result.passage_words())]


def word_across_layers(result: Attribution, word: int, aggregation: Aggregation = DEFAULT_AGGREGATION, target: int = 0) -> Chart:
    """One passage word's share of each layer's attribution, and its rank there."""
    table = word_table(result, aggregation, target)
    data = table[table.position == word]
    text = data.word.iloc[0]
    figure = go.Figure(go.Bar(x=data.layer_label, y=data.share_pct, marker_color="#1f77b4",
                              text=[f"#{r}" for r in data["rank"]], textposition="outside",
                              hovertemplate="%{x}: %{y:.2f}% of the layer · rank %{text}<extra></extra>"))
    uniform = 100 / max(len(result.passage_words()), 1)
    figure.add_hline(y=uniform, line_dash="dot", line_color="#888",
                     annotation_text=f"uniform share ({uniform:.1f}%)", annotation_position="top left")
    apply_layout(figure, f"“{escape_label(text)}” across layers (category: {data.category.iloc[0]})",
            f"Bar label: the word's rank among {len(result.passage_words())} passage words in that layer",
            "Layer (output of)", "Share of the layer's attribution (%)", height=380)
    return Chart(f"word-{word + 1}-{result.example.id}", data, figure)


def answer_word(result: Attribution) -> int:
    """Index of the first passage word of the predicted answer (0 if there is none)."""
    return next((i for i, c in enumerate(word_categories_of(result)) if c.startswith("answer")), 0)
