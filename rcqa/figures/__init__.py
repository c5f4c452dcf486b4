"""Figures of one Attribution: result in, Chart out — a Plotly figure (or escaped HTML) and the data it draws.

No Streamlit here: the pages show Charts, the tests inspect them, and every Chart's data can be downloaded
as CSV or JSON. All passage and question text that reaches HTML or a Plotly label goes through html.escape
(Plotly renders a subset of HTML tags in labels, so unescaped text could restyle or break a figure).

common: the Chart and the layout · words: heatmap, top-k views, one word across layers · roles: categories,
parts of speech, quantifiers · layers: completeness, JSD, layer pairs, token maps · answer: the answer and its
n-best · model: the model's facts and card · lens: what each layer would answer, and knock-outs of its words ·
whole_input: a long passage's overview, start and end apart · pair: two explanations side by side ·
agreement: two methods' explanations of one question, layer by layer · heads: a layer × head grid of the heads'
knock-outs or scores, and its reading · units: sentences or phrases × layers, and which one each layer rests on · views: what each result's show draws,
registered with rcqa.drawing when this package is imported.
"""
from rcqa.figures.agreement import agreement
from rcqa.figures.answer import (
                                answer_passage,
                                answer_summary,
                                example_heading,
                                nbest_html,
                                nbest_table,
)
from rcqa.figures.common import (
                                AGGREGATION_NAMES,
                                COMPLETENESS_WARNING,
                                CONSERVATION_THRESHOLD,
                                Chart,
                                image_export_available,
)
from rcqa.figures.heads import (HEAD_VIEWS, agreement_reading, agreement_table, checks_reading, checks_table, flagged_reading,
                                head_grid, head_pattern, head_reading, heads_reading, heads_table, score_reading,
                                top_attended_table)
from rcqa.figures.layers import (
                                completeness,
                                conservation,
                                conservation_ledger,
                                incomplete_layers,
                                jsd,
                                layer_pair,
                                projection,
                                projection_map,
)
from rcqa.figures.lens import (
                                knockout_reading,
                                knockouts,
                                knockouts_table,
                                layer_answers,
                                layer_answers_table,
)
from rcqa.figures.model import abstention_tradeoff_chart, abstention_tradeoff_sentences, card_scores, model_facts
from rcqa.figures.roles import (
                                POS_COLOURS,
                                ROLE_COLOURS,
                                pos_mix,
                                quantifiers,
                                role_readings,
                                roles,
)
from rcqa.figures.views import (
                                COMPARISON_VIEWS,
                                INTERVENTION_VIEWS,
                                LENS_VIEWS,
)  # importing the views registers how each result draws itself (rcqa.drawing)
from rcqa.figures.words import (
                                PAGE_WORDS,
                                answer_word,
                                heatmap,
                                topk_grid,
                                topk_passage,
                                topk_table,
                                word_across_layers,
                                word_categories_of,
                                word_choices,
                                word_table,
)
from rcqa.figures.pair_units import pair_unit_heatmaps, pair_unit_reading
from rcqa.figures.sentence_check import sentence_check_chart, sentence_check_readings
from rcqa.figures.units import unit_heatmap, unit_layer_pair, unit_layer_pair_reading, unit_readings

__all__ = ["AGGREGATION_NAMES", "COMPARISON_VIEWS", "COMPLETENESS_WARNING", "CONSERVATION_THRESHOLD", "HEAD_VIEWS",
           "INTERVENTION_VIEWS", "LENS_VIEWS", "PAGE_WORDS", "POS_COLOURS", "ROLE_COLOURS", "Chart", "agreement",
           "answer_passage",
           "abstention_tradeoff_chart", "abstention_tradeoff_sentences", "answer_summary", "answer_word", "card_scores", "completeness", "conservation", "conservation_ledger", "example_heading", "heatmap",
           "agreement_reading", "agreement_table", "checks_reading", "checks_table", "flagged_reading", "head_grid", "head_pattern",
           "head_reading", "heads_reading", "heads_table", "score_reading", "top_attended_table", "image_export_available", "incomplete_layers", "jsd", "knockout_reading", "knockouts", "knockouts_table", "layer_answers",
           "layer_answers_table", "layer_pair", "model_facts", "nbest_html", "nbest_table", "pos_mix",
           "projection", "projection_map", "quantifiers", "role_readings", "roles", "topk_grid", "topk_passage", "topk_table",
           "pair_unit_heatmaps", "pair_unit_reading", "sentence_check_chart", "sentence_check_readings", "unit_heatmap", "unit_layer_pair", "unit_layer_pair_reading", "unit_readings", "word_across_layers",
           "word_categories_of", "word_choices", "word_table"]
