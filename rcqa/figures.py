"""Figures of one Attribution: result in, Chart out — a Plotly figure (or escaped HTML) and the data it draws.

No Streamlit here: the pages show Charts, the tests inspect them, and every Chart's data can be downloaded
as CSV or JSON. All passage and question text that reaches HTML or a Plotly label goes through html.escape
(Plotly renders a subset of HTML tags in labels, so unescaped text could restyle or break a figure).
"""
from __future__ import annotations

import functools
import html
import itertools
from dataclasses import dataclass

import numpy as np
import pandas as pd
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from rcqa.analysis.pos import GROUPS as POS_GROUPS
from rcqa.analysis.pos import answer_pos, pos_shares
from rcqa.analysis.projection import GROUPS, project, token_groups
from rcqa.analysis.roles import category_shares, phase_readings, quantifier_share, shares_of_top, word_categories
from rcqa.analysis.similarity import describe, jsd_matrix
from rcqa.analysis.words import distribution, passage_distribution, passage_indices, ranks, top_k, word_scores
from rcqa.attribution.targets import TARGETS
from rcqa.evaluate import score
from rcqa.model import QAModel
from rcqa.types import Answer, Attribution, Example

COMPLETENESS_WARNING = 0.05  # relative error above which a layer's attributions do not add up
AGGREGATION_NAMES = {"l2": "L2 norm over hidden dims (the paper's code)", "sum": "signed sum over hidden dims",
                     "abs_sum": "sum of |values| over hidden dims",
                     "l2_squared": "squared L2 norm over hidden dims (the paper's text)"}
# exclusive labels of a top-k word (a word can be a query word and an answer or supporting word at once)
ROLE_COLOURS = {"answer": "#d62728", "answer+query": "#8c1c13", "supporting": "#ff7f0e",
                "supporting+query": "#b85c00", "query": "#2ca02c", "other": "#c7c7c7"}
POS_COLOURS = dict(zip(POS_GROUPS, ("#1f77b4", "#d62728", "#ff7f0e", "#9467bd", "#c7c7c7", "#7f7f7f", "#e377c2")))
_SMALLEST_ERROR_PCT = 1e-6  # floor of the log-scale completeness chart (an exact 0 has no logarithm)
_MARK = "230, 126, 34"  # RGB of the top-k highlight; rank 1 is the most opaque
_FONT = "line-height: 1.9;"


@dataclass(frozen=True)
class Chart:
    """One view of a result: what it draws (data) and how (a Plotly figure, or escaped HTML)."""

    name: str  # a file-name stem for downloads
    data: pd.DataFrame
    figure: go.Figure | None = None
    html: str | None = None

    def csv(self) -> bytes:
        return self.data.to_csv(index=False).encode()

    def json(self) -> bytes:
        return self.data.to_json(orient="records", indent=1, force_ascii=False).encode()

    def image(self, format: str) -> bytes:
        """The figure as PNG or SVG, drawn by kaleido in a local Chromium (see image_export_available)."""
        return self.figure.to_image(format=format, width=1200, scale=2 if format == "png" else 1)


@functools.cache
def image_export_available() -> bool:
    """Whether figures can be exported server-side: kaleido is installed and finds a local Chromium."""
    try:
        from choreographer.browsers.chromium import Chromium
    except ImportError:
        return False
    return Chromium.find_browser(skip_local=False) is not None


def _label(text: str) -> str:
    """Text for a Plotly label or hover: escaped, so that words like '<b>' show as typed."""
    return html.escape(text, quote=False)


def _settings_line(result: Attribution, aggregation: str, target: int) -> str:
    settings = result.settings
    return (f"Target: {TARGETS.get(result.targets[target]['name'], result.targets[target]['name'])} · "
            f"baseline: {settings['baseline']} · {settings['rule']} rule · token score: "
            f"{AGGREGATION_NAMES[aggregation]}")


def _word_ticks(figure: go.Figure, labels: list[str], **where) -> None:
    """Word labels under an x axis of word positions: at most ~80 of them, upright; hover names every word."""
    ticks = list(range(0, len(labels), max(1, len(labels) // 80)))
    figure.update_xaxes(tickmode="array", tickvals=ticks, ticktext=[labels[i] for i in ticks], tickangle=-90,
                        tickfont={"size": 11}, **where)


def _layout(figure: go.Figure, title: str, subtitle: str, x: str, y: str, height: int = 420) -> go.Figure:
    figure.update_layout(title={"text": title, "subtitle": {"text": subtitle}}, xaxis_title=x, yaxis_title=y,
                         height=height, margin={"t": 90, "l": 90, "r": 30, "b": 90}, template="plotly_white")
    return figure


def _word_order(result: Attribution, include_question: bool) -> list[int]:
    """Indices into result.words: question words first (if asked), then passage words, each in text order.
    Punctuation is no word."""
    chosen = [i for i, w in enumerate(result.words) if (w.segment == "passage" or include_question)
              and not w.is_punctuation]
    return sorted(chosen, key=lambda i: (result.words[i].segment != "question", result.words[i].start_char))


def word_table(result: Attribution, aggregation: str = "l2", target: int = 0,
               include_question: bool = False) -> pd.DataFrame:
    """One row per layer and word: its share of the layer's |attribution| among the shown words, rank, raw score.

    With passage words only, share is the paper's per-layer distribution I_l (in %)."""
    order = _word_order(result, include_question)
    scores = word_scores(result, aggregation, target)[:, order]
    shares = distribution(result, order, aggregation, target)
    passage_categories = dict(zip(passage_indices(result), word_categories_of(result, target)))
    layer_ranks = ranks(shares)
    rows = []
    for layer, label in enumerate(result.layers):
        for position, index in enumerate(order):
            word = result.words[index]
            rows.append({"layer": layer, "layer_label": label, "position": position, "word": word.text,
                         "segment": word.segment, "start_char": word.start_char, "end_char": word.end_char,
                         "share_pct": 100 * shares[layer, position], "rank": int(layer_ranks[layer, position]),
                         "score": float(scores[layer, position]),
                         "category": passage_categories.get(index, "question")})
    return pd.DataFrame(rows)


def word_categories_of(result: Attribution, target: int = 0) -> list[str]:
    """Per passage word, its paper categories joined by '+' ('answer+query'), or 'other'."""
    return [categories or "other" for categories in word_categories(result, target)]


def heatmap(result: Attribution, aggregation: str = "l2", target: int = 0, include_question: bool = False) -> Chart:
    """Layers × words: how each layer's attribution is spread over the words."""
    table = word_table(result, aggregation, target, include_question)
    words = table[table.layer == 0]
    shape = (len(result.layers), len(words))
    share = table.share_pct.to_numpy().reshape(shape)
    columns = [[_label(w) for w in table.word], table.layer_label, table["rank"], table.category,
               np.round(table.score, 5)]
    hover = np.stack([np.asarray(column).reshape(shape) for column in columns], axis=-1)
    figure = go.Figure(go.Heatmap(
        z=share, x=list(range(shape[1])), y=result.layers, customdata=hover, colorscale="Blues", zmin=0,
        colorbar={"title": {"text": "Share of<br>layer (%)"}},
        hovertemplate=("<b>%{customdata[0]}</b> at %{customdata[1]}<br>share %{z:.2f}% · rank %{customdata[2]}"
                       "<br>category: %{customdata[3]}<br>raw score %{customdata[4]}<extra></extra>"),
    ))
    _word_ticks(figure, [_label(word) for word in words.word])
    figure.update_yaxes(autorange="reversed", type="category")
    shown = "question words, then passage words" if include_question else "passage words"
    _layout(figure, "Where each layer's attribution goes: share of the layer's total |attribution| per word",
            f"{_settings_line(result, aggregation, target)} · window {result.window + 1} of "
            f"{result.answer.n_windows}", f"Words of the analysed window ({shown}, in text order)",
            "Layer (embeddings at the top)", height=max(360, 30 * len(result.layers) + 220))
    return Chart(f"heatmap-{result.example.id}", table, figure)


def topk_table(result: Attribution, k: int = 5, aggregation: str = "l2", target: int = 0) -> pd.DataFrame:
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
        pieces.append(html.escape(passage[cursor:word.start_char]))
        text = html.escape(word.text)
        if span_start < word.end_char and word.start_char < span_end:
            text = f'<span style="border-bottom: 2px solid #d62728;">{text}</span>'
        if word_index.get(word.start_char) in marks:
            rank, share = marks[word_index[word.start_char]]
            opacity = 1.0 - 0.65 * (rank - 1) / max(max_rank - 1, 1)
            text = (f'<mark title="rank {rank} · {share:.1f}% of the layer" style="background: rgba({_MARK}, '
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
              "holding the explained span." if result.answer.n_windows > 1 else "")
    return (f'<p style="font-size: 0.85em; color: #555;">Highlighted: the layer\'s top-{k} passage words (the number '
            f"is the rank; darker = more important). Underlined: the explained span ({result.targets[0]['span']}).{window}</p>")


def topk_passage(result: Attribution, layer: int, k: int = 5, aggregation: str = "l2", target: int = 0) -> Chart:
    """The passage with one layer's top-k words highlighted."""
    table = topk_table(result, k, aggregation, target)
    marks = _marks(result, table, layer)
    page = (f'<div style="{_FONT}"><strong>{html.escape(result.layers[layer])}</strong>: top-{k} passage words'
            f"{_fewer_than_k(len(marks), k)}"
            f'<div style="white-space: pre-wrap;">{_marked_passage(result, marks)}</div>{_topk_legend(result, k)}</div>')
    return Chart(f"top{k}-{result.example.id}-{result.layers[layer].replace(' ', '')}",
                 table[table.layer == layer], html=page)


def topk_grid(result: Attribution, k: int = 5, aggregation: str = "l2", target: int = 0) -> Chart:
    """The passage once per layer, each with that layer's top-k words highlighted (the paper's qualitative view)."""
    table = topk_table(result, k, aggregation, target)
    rows = "".join(
        f'<tr><td style="vertical-align: top; padding: 6px 10px 6px 0; white-space: nowrap;"><strong>'
        f'{html.escape(label)}</strong></td><td style="padding: 6px 0; font-size: 0.9em; border-top: 1px solid #eee;">'
        f'{_fewer_than_k(len(marks), k)}{_marked_passage(result, marks)}</td></tr>'
        for layer, label in enumerate(result.layers) for marks in [_marks(result, table, layer)])
    page = (f'<div style="{_FONT}"><table style="border-collapse: collapse;">{rows}</table>'
            f"{_topk_legend(result, k)}</div>")
    return Chart(f"top{k}-all-layers-{result.example.id}", table, html=page)


def roles(result: Attribution, k: int = 5, aggregation: str = "l2", target: int = 0) -> Chart:
    """Per layer, what its top-k passage words are: answer, supporting (±5 words around it), query, or other.

    Bars stack exclusive labels (a query word inside the answer counts once, as 'answer+query'), so every bar is
    100 % of the layer's top words. The data also holds the paper's overlapping per-category shares."""
    distribution = passage_distribution(result, aggregation, target)
    labels = np.array(word_categories_of(result, target))
    top = top_k(distribution, k)
    exclusive = {name: shares_of_top(top, labels == name) for name in ROLE_COLOURS}
    data = pd.concat([_per_layer_table(result, top, exclusive, "exclusive"),
                      _per_layer_table(result, top, category_shares(result, distribution, k, target),
                                       "paper (overlapping)")], ignore_index=True)
    figure = _stacked_shares(result, data[data.measure == "exclusive"], ROLE_COLOURS, k, "words")
    figure.update_layout(legend={"title": {"text": "Top-k word is"}})
    _layout(figure, f"What each layer's top-{k} passage words are",
            "answer = inside the explained span · supporting = within 5 words of it · query = also in the "
            "question (stopwords excluded) · punctuation is no word", "Layer (output of)",
            f"Share of the layer's top-{k} passage words (%)")
    return Chart(f"roles-top{k}-{result.example.id}", data, figure)


def pos_mix(result: Attribution, k: int = 5, aggregation: str = "l2", target: int = 0) -> Chart:
    """Per layer, the parts of speech of its top-k passage words (the paper's groups), beside those of the
    explained span's words."""
    distribution = passage_distribution(result, aggregation, target)
    top = top_k(distribution, k)
    data = _per_layer_table(result, top, pos_shares(result, distribution, k), "top-k")
    span = answer_pos(result, target)
    if span is not None:
        data = pd.concat([data, pd.DataFrame([{"layer": -1, "layer_label": "explained span", "measure": "span",
                                               "category": group, "share_pct": share, "top_words": None}
                                              for group, share in span.items()])], ignore_index=True)
    figure = _stacked_shares(result, data, POS_COLOURS, k, "words", extra_bar="explained span")
    figure.update_layout(legend={"title": {"text": "Part of speech"}})
    _layout(figure, f"Parts of speech of each layer's top-{k} passage words",
            "entity: CD NN NNP NNS PRP PRP$ · verb: VB* · adjective: JJ* · adverb: RB* · function: CC DT EX IN LS "
            "MD PDT POS RP TO UH WDT WP WRB (spaCy's Penn Treebank tags); last bar: the explained span's words",
            "Layer (output of)", f"Share of the layer's top-{k} passage words (%)")
    return Chart(f"pos-top{k}-{result.example.id}", data, figure)


def _per_layer_table(result: Attribution, top: list[np.ndarray], shares: dict[str, np.ndarray],
                     measure: str) -> pd.DataFrame:
    """Long table: one row per layer and category, its share (NaN for a layer with no top words) and how many
    top words the layer has."""
    return pd.DataFrame([{"layer": layer, "layer_label": label, "measure": measure, "category": name,
                          "share_pct": float(values[layer]), "top_words": len(top[layer])}
                         for name, values in shares.items() for layer, label in enumerate(result.layers)])


def _stacked_shares(result: Attribution, data: pd.DataFrame, colours: dict[str, str], k: int, noun: str,
                    extra_bar: str | None = None) -> go.Figure:
    """Stacked bars of shares per layer (and an extra bar); a layer with fewer than k top words says so above its
    bar, and one with none says that its shares are undefined."""
    figure = go.Figure()
    for name, colour in colours.items():
        part = data[data.category == name]
        figure.add_bar(x=part.layer_label, y=part.share_pct, name=name, marker_color=colour,
                       hovertemplate=f"%{{x}}: %{{y:.0f}}% {name}<extra></extra>")
    counts = data.drop_duplicates("layer_label").set_index("layer_label").top_words
    for label in result.layers:
        found = counts.get(label)
        if found is not None and found < k:
            note = "no words with attribution: undefined" if found == 0 else f"only {int(found)} top {noun}"
            figure.add_annotation(x=label, y=100, text=note, showarrow=False, yshift=12, font={"size": 10})
    order = list(result.layers) + ([extra_bar] if extra_bar else [])
    figure.update_layout(barmode="stack")
    figure.update_xaxes(categoryorder="array", categoryarray=order)
    figure.update_yaxes(range=[0, 110])
    return figure


def role_readings(result: Attribution, k: int = 5, aggregation: str = "l2", target: int = 0) -> list[tuple[str, str]]:
    """The phases in plain words (early / middle / late layers), from the paper's category shares."""
    distribution = passage_distribution(result, aggregation, target)
    return phase_readings(result.layers, category_shares(result, distribution, k, target))


def quantifiers(result: Attribution, k: int = 5, aggregation: str = "l2", target: int = 0) -> Chart | None:
    """For 'how many / how much' questions over a passage with ≥ 2 numbers: the paper's quantifier ratio."""
    shares = quantifier_share(result, passage_distribution(result, aggregation, target), k, target)
    if shares is None:
        return None
    data = pd.DataFrame({"layer": range(len(result.layers)), "layer_label": result.layers, "ratio_pct": shares})
    figure = go.Figure(go.Scatter(x=data.layer_label, y=data.ratio_pct, mode="lines+markers", line_color="#9467bd",
                                  hovertemplate="%{x}: %{y:.1f}%<extra></extra>"))
    _layout(figure, f"Quantifier question: how much the top-{k} words dwell on the passage's numbers",
            "(numbers among the top-k, less one if one is in the explained span) / numbers in the passage "
            "(words tagged CD); a gap: the layer has no top words",
            "Layer (output of)", "Numbers in the top-k (% of passage numbers)", height=380)
    figure.update_yaxes(rangemode="tozero")
    return Chart(f"quantifiers-top{k}-{result.example.id}", data, figure)


def word_choices(result: Attribution) -> list[str]:
    """Labels for choosing a passage word: 'word (#position)'."""
    return [f"{w.text} (#{i + 1})" for i, w in enumerate(result.passage_words())]


def word_across_layers(result: Attribution, word: int, aggregation: str = "l2", target: int = 0) -> Chart:
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
    _layout(figure, f"“{_label(text)}” across layers (category: {data.category.iloc[0]})",
            f"Bar label: the word's rank among {len(result.passage_words())} passage words in that layer",
            "Layer (output of)", "Share of the layer's attribution (%)", height=380)
    return Chart(f"word-{word + 1}-{result.example.id}", data, figure)


def completeness(result: Attribution, threshold: float = COMPLETENESS_WARNING) -> Chart:
    """IG's check per layer: do the attributions add up to F(input) − F(baseline)? On a log scale, since good
    errors are tiny."""
    data = pd.DataFrame([{"layer": c.layer, "layer_label": result.layers[c.layer], **c.to_dict(),
                          "relative_error_pct": 100 * c.relative_error} for c in result.completeness])
    figure = go.Figure()
    for name, part in data.groupby("target", sort=False):
        figure.add_bar(x=part.layer_label, y=part.relative_error_pct.clip(lower=_SMALLEST_ERROR_PCT), name=name,
                       text=[f"{error:.2g}% · {steps} step{'s' * (steps != 1)}"
                             for error, steps in zip(part.relative_error_pct, part.steps)],
                       textposition="outside", showlegend=len(result.targets) > 1,
                       marker_color=["#d62728" if e > threshold else "#2ca02c" for e in part.relative_error],
                       customdata=np.stack([part.delta, part.attribution_sum], axis=-1),
                       hovertemplate=("%{x}: %{text}<br>F(input) − F(baseline) = %{customdata[0]:.4f}"
                                      "<br>Σ attributions = %{customdata[1]:.4f}<extra></extra>"))
    figure.add_hline(y=100 * threshold, line_dash="dash", line_color="#d62728")
    figure.add_scatter(x=[None], y=[None], mode="lines", line={"dash": "dash", "color": "#d62728"},
                       name=f"warning above {100 * threshold:g}%")  # names the line in the legend
    top = int(np.ceil(np.log10(max(float(data.relative_error_pct.max()), 100 * threshold)))) + 1
    powers = [10.0 ** p for p in range(int(np.log10(_SMALLEST_ERROR_PCT)), top + 1, 2)]
    figure.update_yaxes(type="log", range=[np.log10(_SMALLEST_ERROR_PCT), top], tickvals=powers,
                        ticktext=[f"{np.format_float_positional(p, trim='-')}%" for p in powers])
    _layout(figure, "Completeness per layer: do the attributions add up?",
            "Relative error |Σ attributions − ΔF| / |ΔF| with ΔF = F(input) − F(baseline); red bars: raise the "
            "steps or set an adaptive tolerance", "Layer (output of)", "Relative completeness error (%, log scale)",
            height=400)
    figure.update_layout(legend={"orientation": "h", "y": -0.25, "x": 1, "xanchor": "right"})
    return Chart(f"completeness-{result.example.id}", data, figure)


def incomplete_layers(result: Attribution, threshold: float = COMPLETENESS_WARNING) -> list[str]:
    """Layer labels whose relative completeness error exceeds the threshold."""
    return [result.layers[c.layer] for c in result.completeness if c.relative_error > threshold]


def jsd(result: Attribution, variant: str = "full", k: int = 5, aggregation: str = "l2", target: int = 0) -> Chart:
    """Jensen–Shannon divergence between every pair of layers' passage-word distributions."""
    matrix = jsd_matrix(passage_distribution(result, aggregation, target), variant, k)
    data = pd.DataFrame([{"layer_a": a, "layer_b": b, "value": float(matrix[i, j])}
                         for i, a in enumerate(result.layers) for j, b in enumerate(result.layers)])
    text = np.where(np.isnan(matrix), "undefined", np.char.mod("%.2f", np.nan_to_num(matrix)))
    figure = go.Figure(go.Heatmap(
        z=matrix, x=result.layers, y=result.layers, zmin=0, zmax=1, colorscale="Viridis", hoverongaps=True,
        text=text, texttemplate="%{text}" if len(result.layers) <= 13 else None,
        colorbar={"title": {"text": "JSD (bits)"}},
        hovertemplate="%{y} vs %{x}: JSD %{text}<extra></extra>"))
    figure.update_yaxes(autorange="reversed")
    description = describe(variant, k)
    undefined = [result.layers[i] for i in np.flatnonzero(np.isnan(np.diag(matrix)))]
    note = (f" · undefined at {', '.join(undefined)}: no attribution left there after restriction" if undefined
            else "")
    _layout(figure, f"How differently layers spread their attribution: Jensen–Shannon divergence ({description})",
            "0 = the two layers rank the passage words identically; 1 = disjoint; distributions renormalised "
            f"after restriction{note}", "Layer (output of)", "Layer (output of)",
            height=max(420, 40 * len(result.layers) + 200))
    return Chart(f"jsd-{variant}-{result.example.id}", data, figure)


def layer_pair(result: Attribution, first: int, second: int, aggregation: str = "l2", target: int = 0) -> Chart:
    """Two layers' word shares side by side, and their difference (second − first)."""
    table = word_table(result, aggregation, target)
    a, b = (table[table.layer == layer].reset_index(drop=True) for layer in (first, second))
    label_a, label_b = result.layers[first], result.layers[second]
    data = pd.DataFrame({"position": a.position, "word": a.word, "category": a.category,
                         f"share_pct_{label_a}": a.share_pct, f"share_pct_{label_b}": b.share_pct,
                         "difference_pct": b.share_pct - a.share_pct})
    words = [_label(w) for w in a.word]
    figure = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08, row_heights=[0.6, 0.4],
                           subplot_titles=(f"Share of each layer's attribution: {label_a} vs {label_b}",
                                           f"Difference: {label_b} − {label_a} (percentage points)"))
    for layer_table, label, colour in ((a, label_a, "#1f77b4"), (b, label_b, "#ff7f0e")):
        figure.add_bar(x=a.position, y=layer_table.share_pct, name=label, marker_color=colour, customdata=words,
                       hovertemplate=f"%{{customdata}}: %{{y:.2f}}% in {label}<extra></extra>", row=1, col=1)
    figure.add_bar(x=a.position, y=data.difference_pct, name="difference", showlegend=False, customdata=words,
                   marker_color=np.where(data.difference_pct >= 0, "#ff7f0e", "#1f77b4"),
                   hovertemplate="%{customdata}: %{y:+.2f} points<extra></extra>", row=2, col=1)
    _word_ticks(figure, words, row=2, col=1)
    figure.update_layout(barmode="group")
    _layout(figure, f"Comparing two layers: {label_a} and {label_b}", _settings_line(result, aggregation, target),
            "", "Share of the layer (%)", height=640)
    figure.update_layout(margin_t=130)  # room for the subplot titles under the subtitle
    figure.update_xaxes(title_text="Passage words (in passage order)", row=2, col=1)
    figure.update_yaxes(title_text="Points", row=2, col=1)
    return Chart(f"layers-{label_a}-vs-{label_b}-{result.example.id}".replace(" ", ""), data, figure)


def projection(result: Attribution, layer: int, method: str = "tsne") -> Chart:
    """A 2-D map of every token vector at one layer, coloured as in the paper."""
    if result.hidden_states is None:
        raise ValueError("this result holds no layer outputs (hidden states); explain it again to project them")
    projected = project(result.hidden_states[layer], method)
    data = pd.DataFrame({"position": range(len(result.tokens)), "token": result.tokens,
                         "group": token_groups(result), "x": projected.points[:, 0], "y": projected.points[:, 1]})
    figure = go.Figure()
    for group, colour in GROUPS.items():
        part = data[data.group == group]
        figure.add_scatter(x=part.x, y=part.y, mode="markers", name=group, marker={"color": colour, "size": 8},
                           customdata=np.stack([[_label(t) for t in part.token], part.position], axis=-1)
                           if len(part) else None,
                           hovertemplate="<b>%{customdata[0]}</b> (token %{customdata[1]})<extra>" + group + "</extra>")
    name = f"t-SNE (perplexity {projected.perplexity:.3g}, seed 0)" if method == "tsne" else "PCA"
    _layout(figure, f"Token vectors at {result.layers[layer]}: {name}",
            "Red: predicted answer · black: [CLS]/[SEP] · green: question · magenta: the answer's sentence · "
            "grey: the rest", *projected.axes, height=520)
    return Chart(f"{method}-{result.layers[layer].replace(' ', '')}-{result.example.id}", data, figure)


def answer_passage(example: Example, answer: Answer) -> str:
    """The passage as escaped HTML with the predicted answer highlighted and the gold answer underlined."""
    marks: list[tuple[int, int, str]] = []
    if answer.best:
        marks.append((answer.best.start_char, answer.best.end_char, "predicted"))
    marks += [(g.start_char, g.start_char + len(g.text), "gold") for g in example.answers if g.start_char >= 0]
    boundaries = sorted({0, len(example.passage), *(p for s, e, _ in marks for p in (s, e))})
    pieces = []
    for start, end in itertools.pairwise(boundaries):
        text = html.escape(example.passage[start:end])
        kinds = {kind for s, e, kind in marks if s <= start and end <= e}
        if "gold" in kinds:
            text = f'<span style="border-bottom: 3px solid #2ca02c;">{text}</span>'
        if "predicted" in kinds:
            text = f'<mark style="background: rgba(214, 39, 40, 0.25); padding: 1px 0;">{text}</mark>'
        pieces.append(text)
    legend = ('<p style="font-size: 0.85em; color: #555;">Highlighted: the model\'s answer'
              + (". Underlined in green: the gold answer." if example.answers else ".") + "</p>")
    return f'<div style="{_FONT} white-space: pre-wrap;">{"".join(pieces)}</div>{legend}'


def answer_summary(example: Example, answer: Answer) -> str:
    """The answer, its probability, the gold answers with EM / F1, and honesty about unanswerable questions."""
    best = answer.best
    if best is None:
        return "<p>The model found no span to answer with.</p>"
    parts = [f'<div style="font-size: 1.25em; font-weight: 600;">{html.escape(best.text)}</div>',
             f"<p>probability {_percent(best.probability)} among every valid span of the passage"
             + (f" · from window {best.window + 1} of {answer.n_windows}" if answer.n_windows > 1 else "") + "</p>"]
    golds = [g.text for g in example.answers]
    if golds:
        exact, f1 = score(best.text, golds)
        parts.append(f"<p>Gold: {' | '.join(html.escape(g) for g in dict.fromkeys(golds))} · exact match "
                     f"{exact:.0f} · F1 {f1:.2f}</p>")
    if example.is_impossible:
        parts.append('<p style="background: #fff3cd; padding: 8px; border-radius: 4px;"><strong>No answer in the '
                     "passage.</strong> This question cannot be answered from the passage, but an extractive model "
                     f"must still point at a span: its best guess has probability {_percent(best.probability)}. "
                     "The attributions below explain that guess, not an answer.</p>")
    return "".join(parts)


def _percent(probability: float) -> str:
    """Two significant digits, so that small probabilities do not all read 0.0%."""
    return f"{100 * probability:.2g}%"


def example_heading(example: Example, model_name: str) -> str:
    """One escaped line naming the example and model a page shows."""
    return (f'<p style="color: #444;"><strong>{html.escape(example.title or example.id)}</strong>: '
            f"“{html.escape(example.question)}” · model {html.escape(model_name)}</p>")


def answer_word(result: Attribution) -> int:
    """Index of the first passage word of the predicted answer (0 if there is none)."""
    return next((i for i, c in enumerate(word_categories_of(result)) if c.startswith("answer")), 0)


def nbest_table(answer: Answer) -> pd.DataFrame:
    """The candidate spans the best answer won against, with the model's probabilities."""
    return pd.DataFrame([{"rank": rank, "answer": span.text, "probability": span.probability,
                          "start logit": span.start_logit, "end logit": span.end_logit,
                          "characters": f"{span.start_char}–{span.end_char}", "window": span.window + 1}
                         for rank, span in enumerate(answer.nbest, 1)])


def model_facts(qa_model: QAModel) -> pd.DataFrame:
    """What a researcher needs to know about the loaded model, as a two-column table."""
    config = qa_model.config
    facts = {"name": qa_model.name, "architecture": qa_model.architecture,
             "layers analysed": f"{qa_model.num_layers + 1}: embeddings and {qa_model.num_layers} encoder blocks",
             "hidden size": getattr(config, "hidden_size", "?"),
             "attention heads": getattr(config, "num_attention_heads", "?"),
             "parameters": f"{qa_model.num_parameters:,}", "device": str(qa_model.device),
             "fingerprint": qa_model.fingerprint,
             "window": f"{qa_model.max_len} tokens, stride {qa_model.doc_stride}, "
                       f"question ≤ {qa_model.max_query_len} tokens"}
    return pd.DataFrame({"property": list(facts), "value": [str(v) for v in facts.values()]})


def card_scores(card: dict) -> pd.DataFrame:
    """The evaluation results in a model card: every entry holding exact_match and f1."""
    rows = [{"evaluated on": name, "exact match": value["exact_match"], "F1": value["f1"], "questions": value.get("n")}
            for name, value in card.items() if isinstance(value, dict) and {"exact_match", "f1"} <= value.keys()]
    return pd.DataFrame(rows, columns=["evaluated on", "exact match", "F1", "questions"])
