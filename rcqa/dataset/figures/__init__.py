"""Figures of a dataset run: summaries in (rcqa.dataset.aggregate.summarize), Charts out, each beside the published
numbers it reproduces. Several runs share one chart where they answer the same question (one line style each);
layers are placed at relative depth so a 6-block model and BERT-base's 12 blocks line up.

paper: the paper's analyses (roles, quantifiers, JSD, parts of speech, scores, completeness) · methods: the
methods' faithfulness and sanity checks · lens: the answer lens and the knock-outs per layer · contrast: a contrast
run's answer against its foil · sentences: the layer roles by sentence · heads: the heads knocked out and the
pruning curve · common: what they share."""
from rcqa.dataset.figures.common import (DASHES, DEPTH_AXIS, SOURCE_NAMES, SOURCE_SYMBOLS, interval_text,
                                         number_text)
from rcqa.dataset.figures.contrast import SHARE_NAMES, contrast_by_layer
from rcqa.dataset.figures.heads import heads_importance, pruning_curves
from rcqa.dataset.figures.lens import KNOCKOUT_COLOURS, LENS_COLOURS, interventions_by_layer, lens_by_layer
from rcqa.dataset.figures.methods import faithfulness_curves, faithfulness_table, paired_table, sanity_by_step, sanity_table
from rcqa.dataset.figures.sentences import sentences_by_layer, sentences_table
from rcqa.dataset.figures.paper import (completeness_by_layer, jsd_map, pos_by_layer, quantifier_by_depth,
                                        quantifier_counts, roles_by_abstention, roles_by_depth, scores_by_type)

__all__ = [
    "DASHES", "DEPTH_AXIS", "KNOCKOUT_COLOURS", "LENS_COLOURS", "SHARE_NAMES", "SOURCE_NAMES", "SOURCE_SYMBOLS",
    "completeness_by_layer", "contrast_by_layer", "faithfulness_curves", "faithfulness_table", "heads_importance",
    "interval_text", "interventions_by_layer", "jsd_map", "lens_by_layer", "number_text", "paired_table",
    "pos_by_layer", "pruning_curves", "quantifier_by_depth", "quantifier_counts", "roles_by_abstention", "roles_by_depth",
    "sanity_by_step", "sanity_table", "scores_by_type", "sentences_by_layer", "sentences_table",
]
