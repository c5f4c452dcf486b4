"""`python -m rcqa report`: one or more runs' dataset-level analyses as summary.json, CSV tables, PNG and SVG
figures and one self-contained HTML page that opens offline.

The first run is the report's subject; every further run is set beside it (same figures, its own line style)
and asked the same questions (rcqa.dataset.conclusions), so a user sees whether the paper's conclusions hold
under both, for example the paper's code settings and a baseline whose completeness error is under 1 %.
"""
from __future__ import annotations

import html
import json
import math
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import plotly.io as pio

from rcqa.analysis.similarity import VARIANTS
from rcqa.dataset import figures, published
from rcqa.dataset.aggregate import Run, by_abstention, load_run, summarize
from rcqa.dataset.kept_summary import kept_summary, with_word_shares
from rcqa.dataset.faithfulness import summaries_prose
from rcqa.dataset.paired_runs import compare_runs, statements
from rcqa.dataset.conclusions import Verdict, conclusion_table, contrast_statement, verdicts, worst_completeness
from rcqa.dataset.sentence_roles import NEEDS_RUN, sentences_source, sentences_statement
from rcqa.dataset.summary import DatasetSummary, Section, summary_json
from rcqa.figures.common import Chart, image_export_available
from rcqa.types.document import Document

ABSTENTION_FIELDS = ("n", "exact_match", "f1", "roles", "roles_ci")  # what the report keeps of each part


@dataclass(frozen=True)
class DatasetReport(Document):
    """The report's summary.json: the first run's summary (its subject), its answered and abstained questions'
    scores and roles, every run's verdicts on the paper's claims and worst median completeness error, and the
    other runs' summaries."""

    subject: DatasetSummary
    run: str
    conclusions: dict[str, list[Verdict]]
    worst_median_completeness: dict[str, float | None]
    compared_runs: dict[str, DatasetSummary]
    by_abstention: dict[str, Section]  # empty where the model never abstained, or in reports written before
    # each other run against the subject over the questions both hold (rcqa.dataset.paired_runs), by its name
    question_by_question: dict[str, dict] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {**self.subject.to_dict(), "run": self.run, "by_abstention": self.by_abstention,
                "conclusions": {name: [vars(v) for v in found] for name, found in self.conclusions.items()},
                "worst_median_completeness": self.worst_median_completeness,
                "compared_runs": {name: s.to_dict() for name, s in self.compared_runs.items()},
                "question_by_question": self.question_by_question}

    def to_json(self) -> str:
        return summary_json(self.to_dict())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DatasetReport:
        return cls(DatasetSummary.from_dict(data), data["run"],
                   {name: [Verdict(**v) for v in found] for name, found in data["conclusions"].items()},
                   data["worst_median_completeness"],
                   {name: DatasetSummary.from_dict(s) for name, s in data["compared_runs"].items()},
                   data.get("by_abstention", {}), data.get("question_by_question", {}))

    def __repr__(self) -> str:
        return f"<DatasetReport of {self.run} · {len(self.compared_runs)} runs compared · {self.subject!r}>"


def build(folders: list[str | Path]) -> tuple[DatasetReport, list[Chart]]:
    """The report (the first run's summary, with every run's verdicts and the other runs' summaries) and charts;
    ValueError, in one sentence, where a run has no readable rows."""
    runs = [load_run(folder) for folder in folders]
    if empty := [str(run.folder) for run in runs if run.rows.num_rows == 0]:
        raise ValueError(f"{', '.join(empty)} holds no readable rows yet (nothing explained, or its shards cannot "
                         "be read): run `python -m rcqa reproduce` into it first, which resumes it")
    names = _unique_names(runs)
    # a run's summary as its runner kept it, where it still holds (the full-dev runs bootstrap for 20 s otherwise)
    kept = [kept_summary(run.folder) for run in runs]
    summaries = {name: found or summarize(run) for name, found, run in zip(names, kept, runs)}
    # the subject's sentence section over all its rows, which a kept summary holds: else read here (with_word_shares)
    subject = kept[0] or with_word_shares(summaries[names[0]], runs[0])
    parts = by_abstention(runs[0])
    summary = DatasetReport(subject, names[0], {name: verdicts(s) for name, s in summaries.items()},
                            {name: worst_completeness(s) for name, s in summaries.items()},
                            {name: s for name, s in summaries.items() if name != names[0]},
                            {part: {key: getattr(found, key) for key in ABSTENTION_FIELDS}
                             for part, found in parts.items()},
                            {name: found for name, run in zip(names[1:], runs[1:])
                             if (found := compare_runs(runs[0].rows, run.rows)) is not None})
    charts = [figures.roles_by_depth(summaries), *([figures.roles_by_abstention(parts, names[0])] if parts else []),
              figures.quantifier_by_depth(summaries),
              *(figures.jsd_map(s, variant, name) for name, s in summaries.items() for variant in VARIANTS),
              figures.pos_by_layer(subject), figures.scores_by_type(subject), figures.completeness_by_layer(summaries)]
    extras = (figures.faithfulness_curves(subject), figures.lens_by_layer(subject), figures.interventions_by_layer(subject),
              figures.contrast_by_layer(subject), figures.sentences_by_layer(subject), figures.sanity_by_step(subject),
              figures.heads_importance(subject), figures.pruning_curves(subject))
    charts += [chart for chart in extras if chart is not None]
    return summary, charts


def write(folders: list[str | Path], out: str | Path, images: bool = True) -> DatasetReport:
    """Write the report into `out`; returns the summary. Images need kaleido and a local Chromium; without them
    (or with images=False) the HTML embeds the interactive figures instead, with plotly.js inline."""
    out = Path(out)
    (out / "figures").mkdir(parents=True, exist_ok=True)
    (out / "tables").mkdir(exist_ok=True)
    summary, charts = build(folders)
    summary.save(out / "summary.json")
    for chart in charts:
        (out / "tables" / f"{chart.name}.csv").write_bytes(chart.csv())
    published.comparison(summary.subject).to_csv(out / "tables" / "published-comparison.csv", index=False)
    conclusion_table(summary.conclusions).to_csv(out / "tables" / "conclusions.csv", index=False)
    if (methods := figures.faithfulness_table(summary.subject)) is not None:
        methods.to_csv(out / "tables" / "faithfulness.csv", index=False)
        if (paired := figures.paired_table(summary.subject)) is not None:  # none where the run compared one method
            paired.to_csv(out / "tables" / "faithfulness_paired.csv", index=False)
    if (sentences := figures.sentences_table(summary.subject)) is not None:
        sentences.to_csv(out / "tables" / "sentences.csv", index=False)
    if (sanity := figures.sanity_table(summary.subject)) is not None:
        sanity.to_csv(out / "tables" / "sanity.csv", index=False)
    svgs = _export_images(charts, out / "figures") if images and image_export_available() else None
    (out / "report.html").write_text(_html(summary, charts, svgs))
    return summary


def _export_images(charts: list[Chart], folder: Path) -> dict[str, str]:
    """Write each chart as PNG and SVG; returns the SVG text per chart for the HTML."""
    svgs = {}
    with _image_server():
        for chart in charts:
            (folder / f"{chart.name}.png").write_bytes(chart.image("png"))
            svg = chart.image("svg")
            (folder / f"{chart.name}.svg").write_bytes(svg)
            svgs[chart.name] = svg.decode()
    return svgs


@contextmanager
def _image_server() -> Iterator[None]:
    """One Chromium for every export (kaleido otherwise starts one per image). Plotly then warns that kaleido's
    browser options are ignored: they are the server's, set here."""
    import kaleido

    kaleido.start_sync_server(silence_warnings=True)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", "The kopts argument is ignored", UserWarning)
            yield
    finally:
        kaleido.stop_sync_server(silence_warnings=True)


def _unique_names(runs: list[Run]) -> list[str]:
    names = [run.name for run in runs]
    return [name if names.count(name) == 1 else f"{name} #{i + 1}" for i, name in enumerate(names)]


def _faithfulness_section(summary: DatasetSummary) -> str:
    table = figures.faithfulness_table(summary)
    if table is None or summary.faithfulness is None:
        return ""
    return f"""<h2>Which explanation to trust?</h2>
<p>Each method's top words deleted and the question answered again, against deleting random words
(Wu &amp; Ong; {html.escape(summaries_prose(summary.faithfulness))}).
{_ANSWER_PROTOCOL[summary.faithfulness.get("spare_answer", False)]}</p>
{_verdict(summary.faithfulness)}
{_table(table)}
{_paired(summary)}"""


def _verdict(found: dict) -> str:
    return "" if "verdict" not in found else f"<p><strong>{html.escape(found['verdict'])}</strong></p>"


def _paired(summary: DatasetSummary) -> str:
    table = figures.paired_table(summary)
    if table is None:
        return ""
    return f"""<h3>Every pair of methods, question by question (AOPC)</h3>
<p>A − B over the questions both define, with a 95 % percentile-bootstrap interval over questions (the pairing
kept) and a two-sided sign test; "told apart" where the interval excludes 0, the one rule the verdict above reads.</p>
{_table(table)}"""


def _sanity_section(summary: DatasetSummary) -> str:
    """A run with the sanity checks: the rule, each entry's verdict sentence and its numbers at the verdict step
    (the chart of every step is among the figures)."""
    found = summary.sanity
    if not found:
        return ""
    step = found["verdict_step"]
    rows = pd.DataFrame([{"method": entry["label"], "mean ρ": entry["cascade"][step]["spearman"]["mean"],
                          "95 % interval": figures.interval_text(entry["cascade"][step]["spearman"]),
                          "fails on (% of questions)": entry["failing"], "verdict": entry["outcome"]}
                         for entry in found["entries"].values()])
    sentences = "".join(f"<li>{html.escape(entry['verdict'])}</li>" for entry in found["entries"].values())
    return f"""<h2>Does the explanation notice when the model is destroyed?</h2>
<p>Adebayo et al.'s sanity check on {found['n']} questions: the QA head, then each block from the last, then the
embeddings re-initialised, and each method's word scores compared with the trained model's (Spearman's ρ;
top-{found['k']} overlap). A method fails on a question when ρ is at least {found['fail_at']} with the QA head and
every block randomised ({html.escape(found['parts'][step])} reached, the embeddings as trained). Over the dataset it
fails where the 95 % interval of its mean ρ there lies at or above {found['fail_at']}, passes where it lies under,
and is not clear otherwise. The random baseline never reads the model: it fails by design.</p>
<ul>{sentences}</ul>
{_table(rows)}"""


def _heads_section(summary: DatasetSummary) -> str:
    """A run with head scores: how well each score predicts the knock-outs, layer by layer, and, where prune-heads
    ran, how many heads each order removes within 1 F1 point (the grid and the curves are among the figures)."""
    found = summary.heads
    if not found:
        return ""
    rows = pd.DataFrame([{"score": name, **{label: figures.number_text(rho, 2) if rho is not None else "–"
                                            for label, rho in zip(found["layers"], rhos)}}
                         for name, rhos in found["agreement"].items()])
    pruning = summary.pruning
    spared = ("" if not pruning else "<p>Heads removed with F1 within 1 point of the unpruned "
              f"{figures.number_text(pruning['f1']['random'][0], 1)} ({pruning['n']} questions): "
              + ", ".join(f"{html.escape(order)} {count}" for order, count in pruning["spared"].items()) + ".</p>")
    return f"""<h2>Which attention heads carry the answer?</h2>
<p>Every head of the answer's window knocked out on {found['n']} questions; each score's mean Spearman ρ with the
knock-outs, per layer (signed scores against the drop in log p(span), magnitudes against its size).</p>
{_table(rows)}
{spared}"""


def _contrast_section(summary: DatasetSummary) -> str:
    """A contrast run's section: where the margin over the foil is won, per layer, and the quantifier claim."""
    found = summary.contrast
    if not found:
        return ""
    rows = pd.DataFrame([{"layer": label, **{f"{name.replace('_', ' ')} %": values[i]
                                             for name, values in found["shares"].items()},
                          "lens margin": found["lens_margin"][i], "answer leads on the lens %": found["lens_ahead"][i]}
                         for i, label in enumerate(summary.layers)])
    statement = contrast_statement(found)
    claim = "" if statement is None else f"<p><b>{html.escape(statement)}</b></p>"
    return f"""<h2>Why this answer and not the foil?</h2>
<p>Each question's explanation is the contrast log p(answer) − log p(foil), foil = {html.escape(found['foil'])}
({found['n']} questions; {summary.n_skipped} without such a foil skipped). Per layer: the shares of answer, foil,
supporting and query words, and of the other numbers (neither the answer's nor the foil's), among the contrast's
top-k words, and the lens's mean margin of the answer over the foil
(the QA head on each layer's states), with the share of questions whose answer already leads there. EM over these
questions: {figures.number_text(found['exact_match'])}.</p>
{claim}
{_table(rows)}"""


def _sentences_section(summary: DatasetSummary) -> str:
    """The layer roles by sentence: the sentence read from the table beside it, where it came from and what it left
    out; a run whose rows cannot be read by sentence says so in one sentence."""
    found, table = summary.sentences, figures.sentences_table(summary)
    if found is None or table is None:
        return f"<h2>Which sentence does each layer rest on?</h2>\n<p>{html.escape(NEEDS_RUN)}</p>"
    return f"""<h2>Which sentence does each layer rest on?</h2>
<p>Per layer, the share (%) of its attribution over the passage on the sentence holding the explained span, on the
other sentences sharing a word with the question, and on the rest, and the questions (%) whose top sentence is the
answer's, with 95 % bootstrap intervals over questions. {html.escape(sentences_source(found))}</p>
<p><strong>{html.escape(sentences_statement(found, summary.layers))}</strong></p>
{_table(table)}"""


_ANSWER_PROTOCOL = {True: "The explained span's own words were never deleted: the test asks which context each method "
                          "finds.",
                    False: "The explained span's own words could be deleted (the old protocol), which mostly measures "
                           "that the answer matters: every method ranks the answer's words first."}


def _type_table(summary: DatasetSummary) -> pd.DataFrame:
    return pd.DataFrame([{"question type": kind, **scores} for kind, scores in summary.question_types.items()])


def _html(report: DatasetReport, charts: list[Chart], svgs: dict[str, str] | None) -> str:
    summary, settings = report.subject, report.subject.settings
    facts = {
        "model": f"{summary.model} (fingerprint {summary.fingerprint})",
        "data": f"{summary.data.path} (first {summary.data.limit or 'all'} questions, sha256 "
                f"{summary.data.sha256[:12]}…)",
        "explained": f"{summary.n} questions ({summary.n_failed} failed and left out)",
        "settings": f"preset {settings.preset}: {json.dumps(settings.settings)}, token score "
                    f"{settings.aggregation}, top-{settings.top_k} words",
        "scores": f"EM {figures.number_text(summary.exact_match)}, F1 {figures.number_text(summary.f1)}",
        "speed": f"{figures.number_text(summary.examples_per_hour, 0)} examples per hour ({figures.number_text(summary.seconds, 0)} s)",
    }
    if parts := report.by_abstention:
        facts["no answer"] = "; ".join(f"{part} {found['n']} (EM {figures.number_text(found['exact_match'])})"
                                       for part, found in parts.items())
    figures_html = []
    for i, chart in enumerate(charts):
        if svgs is not None:
            figures_html.append(f'<figure>{svgs[chart.name]}</figure>')
        else:
            figures_html.append(pio.to_html(chart.figure, include_plotlyjs=(i == 0), full_html=False))
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>rcqa dataset report: {html.escape(report.run)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}td,th{{border:1px solid #ccc;padding:4px 8px;text-align:left}}
figure{{margin:1.5em 0}}svg{{max-width:100%;height:auto}}.no{{color:#b00}}.yes{{color:#070}}</style></head><body>
<h1>How the model finds its answer, over a dataset</h1>
<p>Layer-wise Integrated Gradients over a dataset, reproducing the dataset-level analyses of Ramnath et al.,
“Towards Interpreting BERT for Reading Comprehension Based QA” (EMNLP 2020). Written by
<code>python -m rcqa report</code>.</p>
{_dl(facts)}
<h2>Do the paper's conclusions hold?</h2>
{_table(conclusion_table(report.conclusions))}
<p>Worst per-layer median completeness error: {', '.join(f'{html.escape(n)} {figures.number_text(100 * v, 2) if v is not None else "–"} %'
                                                         for n, v in report.worst_median_completeness.items())}.
Early and late layers are the first and last third of the layers.</p>
<h2>Beside the published numbers</h2>
<p>The published model is BERT-base (12 blocks); ours may have fewer, so layers are compared at equal relative
depth (0 = embeddings, 1 = last block), never by index. Protocols differ as the source column says.</p>
{_table(published.comparison(summary))}
{_faithfulness_section(summary)}
{_sanity_section(summary)}
{_heads_section(summary)}
{_contrast_section(summary)}
{_sentences_section(summary)}
{_question_by_question(report)}
<h2>Scores per question type</h2>
{_table(_type_table(summary))}
<h2>Figures</h2>
{''.join(figures_html)}
</body></html>
"""


def _question_by_question(report: DatasetReport) -> str:
    return "".join(f"<h2>Against {html.escape(name)}, question by question</h2>"
                   + "".join(f"<p>{html.escape(said)}</p>" for said in statements(found, report.run, name))
                   for name, found in report.question_by_question.items())


def _dl(facts: dict) -> str:
    return "<dl>" + "".join(f"<dt><b>{html.escape(k)}</b></dt><dd>{html.escape(v)}</dd>" for k, v in facts.items()) + "</dl>"


def _table(frame: pd.DataFrame) -> str:
    def cell(value) -> str:
        if value is True or value is False:
            return f'<td class="{"yes" if value else "no"}">{"yes" if value else "no"}</td>'
        if value is None or (isinstance(value, float) and math.isnan(value)):
            return "<td>–</td>"
        return f"<td>{html.escape(figures.number_text(value, 2) if isinstance(value, float) else str(value))}</td>"
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
    body = "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in frame.itertuples(index=False))
    return f"<table><tr>{head}</tr>{body}</table>"
