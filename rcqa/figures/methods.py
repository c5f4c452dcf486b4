"""Which explanation to trust: the methods' word scores side by side on the passage, their deletion curves against
random deletion, the summary numbers, and how alike the methods rank the words."""
from __future__ import annotations


import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rcqa.attribution.methods import METHODS
from rcqa.faithfulness.compare import Comparison, MethodResult
from rcqa.faithfulness.entry import Entry
from rcqa.faithfulness.metrics import rank_correlations
from rcqa.figures.answer import percent
from rcqa.faithfulness.report import every_measure, measures, one_question_verdict, readings
from rcqa.faithfulness.summaries import SUMMARIES, FaithfulnessSummary
from rcqa.figures.common import FONT, Chart, apply_layout, escape_label, escape_text, word_ticks
from rcqa.figures.words import MARK
from rcqa.types import overlaps

AGAINST = "31, 119, 180"  # rgb of a word a signed score puts against the answer
COLOURS = {name: method.colour for name, method in METHODS.items()}  # as each method's class says


def method_name(name: str) -> str:
    """A method's label, or an entry's (a method under one ranking: "AttnLRP, signed")."""
    if name in METHODS:
        return METHODS[name].label
    try:
        return Entry.parse(name).label
    except ValueError:  # a method no longer registered, in a comparison saved before: by its name
        return name


def _shown(comparison: Comparison) -> list[MethodResult]:
    """The compared methods, then random's first draw (what a random explanation looks like)."""
    return [*comparison.compared(), comparison.random]


def word_score_table(comparison: Comparison) -> pd.DataFrame:
    """One row per method and passage word: its score over the method's largest word score, and its rank among the
    deletable words (empty for the explained span's words when they are spared)."""
    rows = []
    for result in _shown(comparison):
        scores = result.word_scores[0]
        largest = np.abs(scores).max(initial=0.0)
        rank = {int(word): position + 1 for position, word in enumerate(result.deletions[0].ranking)}
        rows += [{"method": method_name(result.name), "position": i, "word": word.text, "start_char": word.start_char,
                  "end_char": word.end_char, "score": float(scores[i]),
                  "relative_score": float(scores[i] / largest) if largest > 0 else 0.0, "rank": rank.get(i)}
                 for i, word in enumerate(comparison.words)]
    return pd.DataFrame(rows).astype({"rank": "Int64"})


def method_heatmap(comparison: Comparison) -> Chart:
    """Methods × passage words: each word's score relative to the method's top word."""
    table = word_score_table(comparison)
    names = list(dict.fromkeys(table.method))
    shape = (len(names), len(comparison.words))
    ranks = table["rank"].astype(str).replace("<NA>", "– (spared)")
    hover = np.stack([np.asarray(column).reshape(shape) for column in
                      ([escape_label(w) for w in table.word], ranks, np.round(table.score, 5))], axis=-1)
    figure = go.Figure(go.Heatmap(
        z=table.relative_score.to_numpy().reshape(shape), x=list(range(shape[1])), y=names, customdata=hover,
        colorscale="Blues", zmin=0, zmax=1, colorbar={"title": {"text": "Score over<br>the top word's"}},
        hovertemplate=("<b>%{customdata[0]}</b> · %{y}<br>%{z:.2f} of the top word's score · rank "
                       "%{customdata[1]}<br>score %{customdata[2]}<extra></extra>")))
    word_ticks(figure, [escape_label(w.text) for w in comparison.words])
    figure.update_yaxes(autorange="reversed", type="category")
    apply_layout(figure, "What each method says matters: passage words by score",
                 f"{_target_line(comparison)} · scores normalised per method (Wu & Ong), words sum their pieces",
                 "Passage words of the analysed window (in text order)", "Method",
                 height=max(320, 40 * len(names) + 220))
    return Chart(f"methods-heatmap-{comparison.example.id}", table, figure)


def method_passages(comparison: Comparison, k: int = 5) -> Chart:
    """The passage once per method, every word shaded by its score relative to the method's top word, the top k
    numbered by rank, the explained span underlined."""
    table = word_score_table(comparison)
    rows = "".join(
        f'<tr><td style="vertical-align: top; padding: 6px 10px 6px 0; white-space: nowrap;"><strong>'
        f'{escape_text(name)}</strong></td><td style="padding: 6px 0; font-size: 0.9em; border-top: 1px solid '
        f'#eee;">{_shaded_passage(comparison, part, k)}</td></tr>'
        for name, part in table.groupby("method", sort=False))
    legend = (f'<p style="font-size: 0.85em; color: #555;">Shading: the word\'s score over the method\'s top word\'s '
              f"(darker = more important; blue: a signed score against the answer); numbers: the top-{k} ranks. Underlined: the explained span "
              f"({escape_text(comparison.target.span)}). Random shows its first draw.</p>")
    page = f'<div style="{FONT}"><table style="border-collapse: collapse;">{rows}</table>{legend}</div>'
    return Chart(f"methods-passages-{comparison.example.id}", table, html=page)


def _shaded_passage(comparison: Comparison, rows: pd.DataFrame, k: int) -> str:
    passage, span = comparison.example.passage, comparison.span_chars
    pieces = ["… " if comparison.words and comparison.words[0].start_char > 0 else ""]
    cursor = comparison.words[0].start_char if comparison.words else 0
    for word, score, rank in zip(comparison.words, rows.relative_score, rows["rank"]):
        pieces.append(escape_text(passage[cursor:word.start_char]))
        text = escape_text(word.text)
        if overlaps(*span, word.start_char, word.end_char):
            text = f'<span style="border-bottom: 2px solid #d62728;">{text}</span>'
        ranked = not pd.isna(rank)
        mark = f"<sup>{rank}</sup>" if ranked and rank <= k else ""
        title = f"rank {rank}" if ranked else "never deleted (the explained span)"
        colour = MARK if score >= 0 else AGAINST  # a signed score's words against the answer, in blue
        pieces.append(f'<mark title="{title} · {score:.2f} of the top word" style="background: rgba({colour}, '
                      f'{abs(score):.2f}); padding: 1px 2px; border-radius: 3px;">{text}{mark}</mark>')
        cursor = word.end_char
    pieces.append(" …" if comparison.words and cursor < len(passage.rstrip()) else "")
    return "".join(pieces)


def deletion_curves(comparison: Comparison) -> Chart:
    """The explained span's probability as each method's top-k words are deleted, with random deletion's mean and
    the range of its draws as a band."""
    random = measures(comparison, comparison.random)["deletion"]
    ks, draws = random["k"], random["span_probability"]
    low, mean, high = draws.min(axis=0), draws.mean(axis=0), draws.max(axis=0)
    figure = go.Figure()
    figure.add_scatter(x=[*ks, *ks[::-1]], y=100 * np.concatenate([high, low[::-1]]), fill="toself",
                       line={"width": 0}, fillcolor="rgba(127, 127, 127, 0.25)", hoverinfo="skip",
                       name=f"random: range of {len(draws)} draws")
    figure.add_scatter(x=ks, y=100 * mean, mode="lines+markers", line={"color": COLOURS["random"], "dash": "dash"},
                       name="random: mean", hovertemplate="random, k = %{x}: %{y:.3g}%<extra></extra>")
    rows = [{"method": "random (mean)", "k": k, "span_probability": m, "random_min": lo, "random_max": hi}
            for k, m, lo, hi in zip(ks, mean, low, high)]
    for result in comparison.compared():
        curve = measures(comparison, result)["deletion"]["span_probability"][0]
        figure.add_scatter(x=ks, y=100 * curve, mode="lines+markers", name=method_name(result.name),
                           line={"color": COLOURS.get(result.method),
                                 "dash": "solid" if result.ranked_by == "signed" else "dot"},
                           hovertemplate=f"{method_name(result.name)}, k = %{{x}}: %{{y:.3g}}%<extra></extra>")
        rows += [{"method": method_name(result.name), "k": k, "span_probability": p} for k, p in zip(ks, curve)]
    apply_layout(figure, "Deleting each method's top-k passage words: the answer's probability",
                 f"{_target_line(comparison)} · deleted words: {comparison.protocol.operator} "
                 "(see the README) · a faithful method falls faster than random", "Words deleted (k)",
                 "Probability of the explained span (%)", height=440)
    figure.update_xaxes(dtick=1)
    return Chart(f"deletion-curves-{comparison.example.id}", pd.DataFrame(rows), figure)


def verdict_sentence(comparison: Comparison) -> str:
    """The paired verdict over this comparison's one question, from the numbers faithfulness_table shows: one
    question tells no two methods apart, and the sentence says so before naming the highest AOPC."""
    return one_question_verdict({r.name: measures(comparison, r) for r in comparison.methods.values()})[1]


def method_readings(comparison: Comparison) -> list[tuple[str, str]]:
    """(method name, one sentence on what its deletion curve shows against random), per compared method."""
    return [(method_name(name), sentence) for name, sentence in readings(comparison).items()]


def probability_note(comparison: Comparison) -> str:
    """What "the answer's probability" is on this page, and how it relates to the probability Explore shows for the
    same span: here p(start) · p(end) in the window's softmax over tokens, there the span's share of the softmax
    over the candidate spans' scores. Both numbers are the comparison's own."""
    here = percent(comparison.original.span_probability)
    start, end = comparison.span_chars
    span = next((s for s in comparison.answer.nbest if (s.start_char, s.end_char) == (start, end)), None)
    there = ("" if span is None else f"; Explore's {percent(span.probability)} for the same span is another "
             "measure, its share among the candidate spans (a softmax over their start + end scores)")
    return (f"The answer's probability here is p(start) · p(end) of “{comparison.target.span}” in its window (a "
            f"softmax over the window's tokens): {here} with nothing deleted{there}.")


def shown_summaries(comparison: Comparison) -> list[FaithfulnessSummary]:
    """The registered summaries this comparison gives for every entry (rcqa.faithfulness.summaries): normalised AOPC
    only where AOPC's bounds were searched, the soft ones only where their re-answers were made."""
    found = every_measure(comparison).values()
    return [summary for name, summary in SUMMARIES.items()
            if all(values["summaries"][name] is not None for values in found)]


def faithfulness_table(comparison: Comparison) -> pd.DataFrame:
    """Per method, each summary shown_summaries gives (columns by label; which way is more faithful is each one's own,
    summary_captions says it), and random's mean and range for each: its lowest and highest draw, as rows of numbers,
    so that every column holds numbers only."""
    shown, found = shown_summaries(comparison), every_measure(comparison)
    random = found[comparison.random.name]["summaries"]
    rows = []
    for result in comparison.compared():
        own = found[result.name]["summaries"]
        rows.append({"method": method_name(result.name), **{s.label: float(own[s.name][0]) for s in shown}})
    rows.append({"method": f"random (mean of {len(random['aopc'])} draws)",
                 **{s.label: float(random[s.name].mean()) for s in shown}})
    for end, pick in (("lowest", np.min), ("highest", np.max)):
        rows.append({"method": f"random (the {end} of its draws)", **{s.label: float(pick(random[s.name])) for s in shown}})
    return pd.DataFrame(rows)


def summary_captions(comparison: Comparison) -> str:
    """What each summary of faithfulness_table measures and which way is more faithful, one sentence each."""
    return " ".join(summary.caption for summary in shown_summaries(comparison))


def rank_correlation(comparison: Comparison, kind: str = "spearman") -> Chart:
    """How alike two methods rank the passage words: Spearman's ρ or Kendall's τ between their word scores."""
    found = rank_correlations({r.name: r.word_scores[0] for r in comparison.compared()})
    names = [method_name(n) for n in found["methods"]]
    matrix = np.array(found[kind], dtype=float)
    data = pd.DataFrame([{"method_a": a, "method_b": b, kind: matrix[i, j]}
                         for i, a in enumerate(names) for j, b in enumerate(names)])
    figure = go.Figure(go.Heatmap(z=matrix, x=names, y=names, zmin=-1, zmax=1, colorscale="RdBu",
                                  text=np.where(np.isnan(matrix), "undefined", np.char.mod("%.2f", np.nan_to_num(matrix))),
                                  texttemplate="%{text}", hovertemplate="%{y} · %{x}: %{text}<extra></extra>"))
    figure.update_yaxes(autorange="reversed")
    symbol = {"spearman": "Spearman's ρ", "kendall": "Kendall's τ"}[kind]
    apply_layout(figure, f"Do the methods rank the words alike? {symbol}",
                 "Between the methods' passage-word scores; 1 = the same order, 0 = unrelated", "", "", height=420)
    return Chart(f"rank-correlation-{kind}-{comparison.example.id}", data, figure)


def _target_line(comparison: Comparison) -> str:
    return f"Target: {comparison.target.description} ({escape_label(comparison.target.span)})"
