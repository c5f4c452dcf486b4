"""AttnLRP written out on relevances, rule by rule, for a BERT model (no autograd): the reference the one-pass
gradient × input of the rule-modified model (rcqa.attribution.lrp) is tested against."""
from __future__ import annotations

import torch

from rcqa.attribution.lrp.rules import EPSILON


def _stable(y: torch.Tensor) -> torch.Tensor:
    return y + EPSILON * torch.where(y >= 0, 1.0, -1.0).to(y.dtype)


def linear_back(x, linear, relevance):
    """ε-rule: R_i = x_i Σ_j W_ji R_j / (y_j + ε sign y_j)."""
    y = torch.nn.functional.linear(x, linear.weight, linear.bias)
    return x * ((relevance / _stable(y)) @ linear.weight)


def add_back(a, b, relevance):
    """a + b: each summand its share a / (a + b)."""
    total = a + b
    return a * relevance / total, b * relevance / total


def layer_norm_back(x, norm, relevance):
    """y = (C x / σ) w + b per token, C the centring: the bias's share goes; the rest through the linear map."""
    sigma = torch.sqrt(x.var(-1, unbiased=False, keepdim=True) + norm.eps)
    scaled = (x - x.mean(-1, keepdim=True)) / sigma * norm.weight
    y = scaled + norm.bias
    relevance = scaled * relevance / _stable(y)  # ε-rule on the bias; w ⊙ (·) is element-wise linear
    centred = (x - x.mean(-1, keepdim=True)) / sigma
    ratio = relevance / centred  # each z_j = Σ_i M_ji x_i with M = (I − 11ᵀ/D) / σ
    dim = x.shape[-1]
    mixing = (torch.eye(dim, dtype=x.dtype) - 1 / dim) / sigma[..., None]
    return x * torch.einsum("tji,tj->ti", mixing, ratio)


def product_back(a, b, relevance):
    """z = a b (matrices), the uniform rule: each factor gets half of each term a_ik b_kj's share of R_ij."""
    share = torch.einsum("ik,kj,ij->ikj", a, b, relevance / (a @ b))
    return share.sum(-1) / 2, share.sum(0) / 2


def softmax_back(x, relevance):
    s = torch.softmax(x, -1)
    return x * (relevance - s * relevance.sum(-1, keepdim=True))


def bert_layer_back(layer, h, relevance):
    """Relevance at the input h (tokens × dim) of one BertLayer from the relevance at its output."""
    attention, heads = layer.attention, layer.attention.self.num_attention_heads
    q, k, v = (torch.nn.functional.linear(h, m.weight, m.bias)
               for m in (attention.self.query, attention.self.key, attention.self.value))
    size = q.shape[-1] // heads
    context = torch.zeros_like(q)
    for head in range(heads):
        part = slice(head * size, (head + 1) * size)
        context[:, part] = torch.softmax(q[:, part] @ k[:, part].T * size ** -0.5, -1) @ v[:, part]
    attended = torch.nn.functional.linear(context, attention.output.dense.weight, attention.output.dense.bias)
    first = attended + h
    normed = attention.output.LayerNorm(first)
    inner = torch.nn.functional.linear(normed, layer.intermediate.dense.weight, layer.intermediate.dense.bias)
    outer = torch.nn.functional.linear(torch.nn.functional.gelu(inner), layer.output.dense.weight,
                                       layer.output.dense.bias)

    relevance = layer_norm_back(outer + normed, layer.output.LayerNorm, relevance)
    to_outer, to_normed = add_back(outer, normed, relevance)
    to_inner = linear_back(torch.nn.functional.gelu(inner), layer.output.dense, to_outer)  # then GELU: identity
    to_normed = to_normed + linear_back(normed, layer.intermediate.dense, to_inner)
    relevance = layer_norm_back(first, attention.output.LayerNorm, to_normed)
    to_attended, to_h = add_back(attended, h, relevance)
    to_context = linear_back(context, attention.output.dense, to_attended)
    to_q, to_k, to_v = torch.zeros_like(q), torch.zeros_like(k), torch.zeros_like(v)
    for head in range(heads):
        part = slice(head * size, (head + 1) * size)
        scores = q[:, part] @ k[:, part].T * size ** -0.5
        to_a, to_v[:, part] = product_back(torch.softmax(scores, -1), v[:, part], to_context[:, part])
        to_scores = softmax_back(scores, to_a)  # the scaling is linear: it hands the relevance on whole
        to_q[:, part], to_kt = product_back(q[:, part], k[:, part].T, to_scores)
        to_k[:, part] = to_kt.T
    return to_h + sum(linear_back(h, m, r) for m, r in ((attention.self.query, to_q), (attention.self.key, to_k),
                                                         (attention.self.value, to_v)))


def bert_relevance(model, input_ids, start: int, end: int) -> list[torch.Tensor]:
    """Per layer (embeddings, then every block's output), tokens × dim relevance of start logit + end logit."""
    with torch.no_grad():
        states = model(input_ids=input_ids, output_hidden_states=True).hidden_states
        top = states[-1][0]
        logits = torch.nn.functional.linear(top, model.qa_outputs.weight, model.qa_outputs.bias)
        at_logits = torch.zeros_like(logits)
        at_logits[start, 0], at_logits[end, 1] = logits[start, 0], logits[end, 1]
        relevance = [linear_back(top, model.qa_outputs, at_logits)]
        for layer, h in zip(reversed(model.bert.encoder.layer), reversed(states[:-1])):
            relevance.insert(0, bert_layer_back(layer, h[0], relevance[0]))
    return relevance
