"""A contrast run's rows over 4 layers, built by hand (the dataset's contrast tests and the Dataset page's)."""
import json

from rcqa.analysis.pos import GROUPS
from rcqa.analysis.similarity import VARIANTS
from tests.helpers.hand_runs import row

LAYERS = ["embeddings", "block 0", "block 1", "block 2"]


def contrast_cell(foil_share, margin, other_numbers=None, request="distractor-number"):
    cell = {"foil": {"request": request, "text": "3"}, "category_foil": foil_share, "lens_margin": margin}
    return json.dumps(cell if other_numbers is None else {**cell, "category_other_numbers": other_numbers})


def four_layer_row(id, answer, foil_share, margin, other_numbers, em=1.0) -> dict:
    """A quantifier question's row of a contrast run over 4 layers (the hand rows have 3)."""
    return {**row(id, quantifier=True, em=em), "layers": LAYERS, "category_answer": list(answer),
            "category_supporting": [0.0] * 4, "category_query": [0.0] * 4, "distribution": [[.5, .5]] * 4,
            "top_k": [[]] * 4, **{f"pos_{g}": [100.0 if g == "entity" else 0.0] * 4 for g in GROUPS},
            **{f"jsd_{v}": [[0.0] * 4] * 4 for v in VARIANTS}, "completeness": [0.001] * 4, "steps": [8] * 4,
            "contrast": contrast_cell(foil_share, margin, other_numbers)}


def contrast_rows(late_other: float, em_of_c: float):
    # the last block's shares are 50 and 0 everywhere: there only the two spans have attribution, and the verdict
    # leaves it out. The foil's share falls while the other numbers' rises: the verdict reads the other numbers.
    return [four_layer_row("a", (0, 20, 60, 50), [40, 20, 0, 50], [-1.0, 0.5, 2.0, 3.0], [0, 20, 40, 0]),
            four_layer_row("b", (20, None, 80, 50), [40, None, 20, 50], [-2.0, -1.0, 1.0, 2.0],
                           [0, None, late_other, 0]),
            four_layer_row("c", (10, 40, 70, 50), [40, 40, 0, 50], [0.5, 1.5, 3.0, 4.0], [20, 40, 0, 0],
                           em=em_of_c)]
