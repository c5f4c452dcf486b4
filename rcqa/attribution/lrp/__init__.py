"""AttnLRP (Achtibat et al., ICML 2024): relevance at every layer from one forward and one backward pass.

rules: the rules as autograd Functions; model: the private rule-modified copy of a shared model; relevance: the
pass itself; explain: its layers, as layer-wise IG gives them."""
from rcqa.attribution.lrp.explain import explain_layers
from rcqa.attribution.lrp.relevance import Relevance, answer_logits, batch_relevance, forget_kept_forward, \
    layer_relevance

__all__ = ["Relevance", "answer_logits", "batch_relevance", "explain_layers", "forget_kept_forward",
           "layer_relevance"]
