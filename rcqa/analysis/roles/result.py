"""The roles analysis as a registry entry (ROLES): its typed result, RoleShares, and role_shares, which computes it
from the categories, the shares and the readings."""
from __future__ import annotations

from dataclasses import dataclass

from rcqa.analysis.registry import Analysis, Inputs, json_list
from rcqa.analysis.roles.categories import CATEGORIES, category_labels, explains_abstention
from rcqa.analysis.roles.readings import phase_readings
from rcqa.analysis.roles.shares import category_shares, kind_share, quantifier_share, role_numbers


# per layer, the answer's share of the attribution and the most of the top-k its words can fill (RoleShares)
ANSWER_MEASURES = ("answer_attribution", "answer_ceiling")


@dataclass(frozen=True)
class RoleShares:
    """The roles analysis of one target: per category the % of each layer's top-k words (None where a layer has no
    top word), the name each category is shown under, the phases in plain words, the quantifier share (None
    unless a quantifier question, see quantifier_share), and per layer the answer's share of the attribution and its
    ceiling in the top-k (None where a layer has no top word; None throughout in a document written before them)."""

    categories: dict[str, list]
    category_labels: dict[str, str]
    phases: list[dict]  # {"layers": "L1–L4", "reading": "…"} per third of the layers
    quantifier_share: list | None
    answer_attribution: list | None = None
    answer_ceiling: list | None = None

    def to_dict(self) -> dict:
        return {"categories": self.categories, "category_labels": self.category_labels, "phases": self.phases,
                "quantifier_share": self.quantifier_share, "answer_attribution": self.answer_attribution,
                "answer_ceiling": self.answer_ceiling}

    @classmethod
    def from_dict(cls, document: dict) -> RoleShares:
        return cls(document["categories"], document["category_labels"], document["phases"],
                   document["quantifier_share"], document.get("answer_attribution"), document.get("answer_ceiling"))

    def row(self) -> dict:
        return {**{f"category_{c}": self.categories[c] for c in CATEGORIES}, "quantifier_share": self.quantifier_share,
                "answer_attribution": self.answer_attribution, "answer_ceiling": self.answer_ceiling}


def role_shares(inputs: Inputs) -> RoleShares:
    result, target, k = inputs.result, inputs.target, inputs.k
    quantifier = quantifier_share(result, inputs.distribution, k, target)
    numbers = role_numbers(result, inputs.distribution, k, target)
    phases = phase_readings(result.layers, numbers, explains_abstention(result, target))
    return RoleShares({name: json_list(values, 2)
                       for name, values in category_shares(result, inputs.distribution, k, target).items()},
                      category_labels(result, target), [{"layers": span, "reading": text} for span, text in phases],
                      None if quantifier is None else json_list(quantifier, 2),
                      json_list(kind_share(numbers.attribution, "answer"), 2), json_list(numbers.ceiling, 2))


ROLES = Analysis("roles", "What each layer's top words are", "the % of each layer's top-k words that are answer, supporting and query words (and a "
                 "contrast's foil), the phases in plain words, the quantifier share, the answer's share of each "
                 "layer's attribution and its ceiling in the top-k", role_shares, RoleShares,
                 {**{f"category_{c}": "per_layer" for c in CATEGORIES}, "quantifier_share": "per_layer",
                  **{name: "per_layer" for name in ANSWER_MEASURES}})
