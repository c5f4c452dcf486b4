"""Inside the layer: which attention heads carry the answer. gates: a private copy of the model with every head's
context gated; scores: the case every score reads, and each head knocked out; base and registry: the head scores,
each one registered class (HEAD_SCORES): relevance, AttnLRP's relevance per head from one pass;
attention_attribution, Hao et al.'s IG over each layer's attention; gradient, the gradient importance; result:
HeadScores, one question's heads scored, which saves, loads and shows itself; run: score_heads, which makes one;
pruning: F1 as heads are removed in the order of their importance over a dataset; patterns: what a head attends to,
and whether it looks from the question at the answer; cost: the price of scoring them, for the queue; memory: what
scoring them holds, and its batches within the memory budget."""
# the registry first: a score registers itself as its module is first imported, in the order the registry imports them
from rcqa.attention_heads.registry import HEAD_SCORES, HeadScore, Scored, SharedCase, head_score
from rcqa.attention_heads.cost import heads_memory_mb, heads_price
from rcqa.attention_heads.gates import FILLS, HeadLayout, gated_model, head_layout, knock_out_each
from rcqa.attention_heads.patterns import FLAG_RATIO, HeadPatterns, head_patterns
from rcqa.attention_heads.pruning import RANDOM, heads_spared, pruning_curve, removal_order
from rcqa.attention_heads.result import HeadScores
from rcqa.attention_heads.run import first_step, score_case, score_heads
from rcqa.attention_heads.scores import (HeadCase, HeadKnockouts, head_case, knock_out_heads, layout_for,
                                         span_log_likelihood)

__all__ = ["FILLS", "FLAG_RATIO", "HEAD_SCORES", "RANDOM", "HeadCase", "HeadKnockouts", "HeadLayout",
           "HeadPatterns", "HeadScore", "HeadScores", "Scored", "SharedCase", "first_step", "gated_model",
           "head_case", "head_layout", "head_patterns", "head_score", "heads_memory_mb", "heads_price",
           "heads_spared", "knock_out_each", "knock_out_heads", "layout_for", "pruning_curve",
           "removal_order", "score_case", "score_heads", "span_log_likelihood"]
