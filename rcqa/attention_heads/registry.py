"""The head scores, each one class on rcqa.attention_heads.base.HeadScore in a module of its own, registered by
name in HEAD_SCORES: the scoring, its price and memory, the agreement, the grid, the page, the CLI, the dataset run,
the bench and the pruning curve read it. Each import below is a score's registry line (docs/heads.md: adding a head
score); the order is the order they run and are shown in."""
from rcqa.attention_heads.base import HEAD_SCORES, HeadScore, Scored, SharedCase, head_score
from rcqa.attention_heads.relevance import AttnLRPHeads
from rcqa.attention_heads.attention_attribution import AttentionAttributionHeads
from rcqa.attention_heads.gradient import GradientImportance
from rcqa.attention_heads.first_order import FirstOrderKnockout

__all__ = ["HEAD_SCORES", "AttentionAttributionHeads", "AttnLRPHeads", "FirstOrderKnockout", "GradientImportance",
           "HeadScore", "Scored", "SharedCase", "head_score"]
