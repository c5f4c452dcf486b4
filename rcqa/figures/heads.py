"""Which attention heads carry the answer: a layer × head grid of one score (the knock-outs' change in the span's
log-probability, or a score that tries to predict it), and the sentences that read it; what one head does: its
attention from the answer, [CLS] and the question over the passage, its top attended tokens and its knock-out."""
from __future__ import annotations

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from rcqa.attention_heads import FLAG_RATIO, HEAD_SCORES, HeadPatterns, HeadScores, head_score
from rcqa.faithfulness.paired import MIN_QUESTIONS, paired_difference
from rcqa.figures.common import Chart, apply_layout, escape_label

HEAD_VIEWS = ("knockout", *HEAD_SCORES)  # what HeadScores.show draws
TOP_ATTENDED = 5


def heads_table(found: HeadScores) -> pd.DataFrame:
    """One row per layer and head: the knock-out's change in log p(span), whether it changed the answer, and every
    score."""
    rows = []
    for layer, label in enumerate(found.layers):
        for head in range(found.heads):
            rows.append({"layer": layer, "layer_label": label, "head": head,
                         "delta_log_prob": float(found.knockout.delta_log_likelihood[layer, head]),
                         "flipped": bool(found.knockout.flips[layer, head]),
                         "answer_after": found.knockout.answers[layer][head],
                         **{name: float(score[layer, head]) for name, score in found.scores.items()}})
    return pd.DataFrame(rows)


def heads_reading(data: pd.DataFrame) -> str:
    """One sentence from the table: the head whose knock-out lowers log p(span) most, how many knock-outs lower it
    by more than 0.1, and how many change the answer."""
    worst = data.loc[data.delta_log_prob.idxmin()]
    if worst["delta_log_prob"] >= 0:
        return f"No head's knock-out lowers the span's log-probability; {int(data.flipped.sum())} change the answer."
    lowering = int((data.delta_log_prob < -0.1).sum())
    return (f"Knocking out {worst['layer_label']}, head {int(worst['head'])} lowers log p(span) most "
            f"({worst['delta_log_prob']:+.3f}); {lowering} of {len(data)} heads lower it by more than 0.1, and "
            f"{int(data.flipped.sum())} change the answer.")


def head_grid(found: HeadScores, view: str = "knockout") -> Chart:
    """The layer × head grid of the knock-outs' change in log p(span) (red: the span loses), or of a score (a
    signed one on the same red-blue scale)."""
    if view not in HEAD_VIEWS:
        raise ValueError(f"unknown view {view!r}; choose one of {', '.join(HEAD_VIEWS)}")
    data = heads_table(found)
    column = "delta_log_prob" if view == "knockout" else view
    grid = data.pivot(index="layer", columns="head", values=column).to_numpy()
    signed = view == "knockout" or head_score(view).signed
    figure = go.Figure(go.Heatmap(
        z=grid, x=[f"head {h}" for h in range(found.heads)], y=found.layers,
        colorscale="RdBu" if signed else "Viridis", zmid=0 if signed else None,
        hovertemplate="%{y}, %{x}: %{z:.4f}<extra></extra>"))
    title = ("Each head knocked out: change in log p(span)" if view == "knockout"
             else f"Each head's {head_score(view).description}")
    apply_layout(figure, title, f"explained span “{escape_label(found.explained_span)}” · fill: {found.fill}",
                 "Head", "Layer (block)", height=max(300, 40 * len(found.layers) + 120))
    return Chart(f"heads-{view}-{found.example.id}", data, figure)


def agreement_table(found: HeadScores) -> pd.DataFrame:
    """Per score and layer: Spearman's ρ with the knock-outs' |change in log p(span)| (HeadScores.agreement)."""
    return pd.DataFrame([{"score": name, "layer": layer, "layer_label": found.layers[layer], "spearman": rho}
                         for name, rhos in found.agreement().items() for layer, rho in enumerate(rhos)])


def mean_agreement(found: HeadScores) -> dict[str, float]:
    """Per score, its mean ρ over the layers where it is defined (NaN where none is)."""
    return {name: float(np.nanmean([np.nan if r is None else r for r in rhos]) if any(r is not None for r in rhos)
                        else np.nan) for name, rhos in found.agreement().items()}


def score_reading(data: pd.DataFrame, view: str) -> str:
    """For a score's grid: the head it ranks first (the one it says matters most: a signed score's most positive, a
    predicted change's most negative), and where that head stands among the knock-outs (ranked by the drop −Δ for a
    signed score or a predicted change, by |Δ| for a magnitude)."""
    if view == "knockout":
        return heads_reading(data)
    score = head_score(view)
    first = int(np.argmax(score.importance(data[view].to_numpy())))
    top = data.iloc[first]
    effect = score.importance(score.knockout_effect(data.delta_log_prob.to_numpy()))
    rank = int((effect > effect[first]).sum()) + 1
    kind = "drop in log p(span)" if score.signed else "change in log p(span)"
    return (f"{score.short[0].upper()}{score.short[1:]} ranks {top['layer_label']}, head {int(top['head'])} first "
            f"({top[view]:+.4f}); its knock-out's {kind} ({top['delta_log_prob']:+.3f}) ranks {_ordinal(rank)} of "
            f"{len(data)}.")


def agreement_reading(found: HeadScores) -> str:
    """Each score's agreement with the knock-outs over the layers (Spearman's ρ per layer: its range and mean), and
    the score that agrees best on average."""
    table = agreement_table(found).dropna(subset=["spearman"])
    if table.empty:
        return "No score can be ranked against the knock-outs: in every layer a score or the knock-outs are constant."
    parts, means = [], {}
    for name, rows in table.groupby("score", sort=False):
        means[name] = rows.spearman.mean()
        parts.append(f"{head_score(name).short} {rows.spearman.min():.2f} to {rows.spearman.max():.2f} "
                     f"(mean {means[name]:.2f})")
    best = max(means, key=means.__getitem__)
    by_layer = table.pivot(index="layer", columns="score", values="spearman")
    return (f"How each score ranks a layer's heads against the knock-outs (Spearman's ρ per layer): "
            f"{'; '.join(parts)}. {closest_reading(by_layer, best)}")


def closest_reading(by_layer: pd.DataFrame, best: str) -> str:
    """The score with the highest mean ρ, named as the closest only where the house's paired rule
    (rcqa.faithfulness.paired: layers as the pairs) tells it apart from every other score."""
    others = [name for name in by_layer.columns if name != best]
    if not others:
        return ""
    compared = [paired_difference(best, other, "spearman", by_layer[best].to_numpy(float),
                                  by_layer[other].to_numpy(float)) for other in others]
    ahead = [difference.low is not None and difference.low > 0 for difference in compared]  # interval above 0
    named = head_score(best).short
    if all(ahead):
        return f"The closest: {named}, ahead of every other score by a paired interval over the layers."
    if compared[0].low is None:
        return (f"Highest mean: {named}; not told apart from the others: {len(by_layer)} layers are too few for a "
                f"paired interval (at least {MIN_QUESTIONS}); the dataset report compares them over questions.")
    tied = [head_score(d.b).short for d, told in zip(compared, ahead) if not told]
    return f"Highest mean: {named}; not told apart from {', '.join(tied)} (paired interval over the layers)."


def checks_table(found: HeadScores) -> pd.DataFrame:
    """Per layer, the two checks the scores carry: AttnLRP's conservation gap at the attention output (a share of
    the relevance that moves there) and attention attribution's completeness gap (a share of |F(A) − F(0)|)."""
    return pd.DataFrame({"layer": found.layers, "conservation_gap": found.conservation["gap"],
                         "completeness_gap": found.completeness["gap"]})


def checks_reading(checks: pd.DataFrame) -> str:
    """The checks' worst layers, from checks_table."""
    conservation = checks.loc[checks.conservation_gap.idxmax()]
    completeness = checks.loc[checks.completeness_gap.idxmax()]
    return (f"Conservation (AttnLRP per head): the heads' relevance plus what the ε-rule absorbs equals the relevance "
            f"reaching the attention output to within {conservation.conservation_gap:.1e} of it at worst "
            f"({conservation.layer}). Completeness (attention attribution): a layer's attributions add up to "
            f"F(A) − F(0) to within {completeness.completeness_gap:.2%} at worst ({completeness.layer}).")


def head_pattern(patterns: HeadPatterns, layer: int, head: int, label: str, example_id: str) -> Chart:
    """One head's attention over the passage's tokens from the answer span (the mean of its tokens), from [CLS] and
    from each question token; its downloads are named after the example shown (`example_id`)."""
    sources, grid = patterns.pattern(layer, head)
    passage = [patterns.tokens[p] for p in patterns.passage]
    columns = [f"{i}:{escape_label(token)}" for i, token in enumerate(passage)]  # a token may repeat
    figure = go.Figure(go.Heatmap(z=grid, x=columns, y=[escape_label(s) for s in sources], colorscale="Blues",
                                  zmin=0, hovertemplate="from %{y} to %{x}: %{z:.3f}<extra></extra>"))
    apply_layout(figure, f"{label}, head {head}: attention over the passage",
                 "rows: where it attends from; columns: the passage's tokens", "Passage token", "From",
                 height=max(300, 22 * len(sources) + 160))
    figure.update_xaxes(showticklabels=len(passage) <= 120)
    figure.update_yaxes(autorange="reversed")  # the answer's row on top, the question's in its order below
    data = pd.DataFrame([{"from": source, "position": i, "token": token, "attention": float(grid[r, i])}
                         for r, source in enumerate(sources) for i, token in enumerate(passage)])
    return Chart(f"head-pattern-{layer}-{head}-{example_id}", data, figure)


def top_attended_table(patterns: HeadPatterns, layer: int, head: int) -> pd.DataFrame:
    """Per source (the answer span, [CLS], the question), the passage tokens the head attends to most."""
    return pd.DataFrame([{"from": source, "rank": rank + 1, "token": token, "attention": weight}
                         for source, top in patterns.top_attended(layer, head, TOP_ATTENDED).items()
                         for rank, (token, weight) in enumerate(top)])


def head_reading(found: HeadScores, patterns: HeadPatterns, layer: int, head: int) -> str:
    """One head: its knock-out's change in log p(span) and what it did to the answer, and its attention from the
    question on the answer span against the uniform share, flagged by rcqa.attention_heads.patterns' rule."""
    delta, flipped = found.knockout.delta_log_likelihood[layer, head], found.knockout.flips[layer, head]
    after = found.knockout.answers[layer][head]
    outcome = f"changes the answer to “{after}”" if flipped else "leaves the answer as it was"
    share, uniform = patterns.question_to_answer()[layer, head], patterns.uniform_share
    flag = ("it looks from the question at the answer" if patterns.flagged()[layer, head]
            else "below the flag's rule")
    return (f"Knocking out {found.layers[layer]}, head {head} changes log p(span) by {delta:+.3f} and {outcome}. "
            f"From the question's tokens it puts {share:.3f} of its attention on the answer span, "
            f"{share / uniform:.1f} times the uniform share ({uniform:.3f}): {flag} (at least {FLAG_RATIO:g} times).")


def flagged_reading(found: HeadScores, patterns: HeadPatterns) -> str:
    """How many heads look from the question at the answer (the flag's rule), the strongest named."""
    shares, flagged = patterns.question_to_answer(), patterns.flagged()
    rule = (f"at least {FLAG_RATIO:g} times the uniform share ({patterns.uniform_share:.3f}) of their attention "
            f"from the question's tokens on the answer span")
    if not flagged.any():
        return f"No head looks from the question at the answer ({rule})."
    order = sorted(zip(*np.nonzero(flagged)), key=lambda at: -shares[at])
    named = ", ".join(f"{found.layers[layer]} head {head} ({shares[layer, head]:.3f})" for layer, head in order[:3])
    return f"{int(flagged.sum())} of {flagged.size} heads look from the question at the answer ({rule}): {named}."


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
