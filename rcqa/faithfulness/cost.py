"""What the methods' comparison and sanity checks cost before they run (rcqa.attribution.cost's model of the work),
so that the queue can price them and a server can refuse what is over its budget.

Scoring one window: each method's passes through the L blocks (a forward and a backward, 36 h² multiply-adds per
token and block; IG's expected path points), a pass shared by several methods (the embeddings' gradient, the
attention maps) counted once, plus the forward that records the layer outputs. Re-answering: one forward (a third
of a pass) per variant of the window with words deleted, or with its embeddings scaled.
"""
from __future__ import annotations

from collections.abc import Sequence

from rcqa.attribution.cost import FORWARD, block_seconds
from rcqa.attribution.methods import METHODS, make_method
from rcqa.attribution.methods.random_baseline import RandomBaseline
from rcqa.attribution.settings import ExplainSettings
from rcqa.faithfulness.summaries import SUMMARIES
from rcqa.model import QAModel


def method_passes(settings: ExplainSettings, methods: Sequence[str]) -> dict[str, float]:
    """Per method (and random), its passes through every block to score one window: a pass shared by several
    methods counted at the first of them, where it is computed."""
    found: dict[str, float] = {}
    shared: set[str] = set()
    for name in dict.fromkeys((*methods, RandomBaseline.name)):
        method = make_method(name, settings)
        found[name] = 0.0 if method.shared_pass in shared else method.block_passes()
        shared.add(method.shared_pass or name)
    return found


def scoring_passes(settings: ExplainSettings, methods: Sequence[str]) -> float:
    """Passes through every block to score one window with every method (and random), the recording forward in."""
    return FORWARD + sum(method_passes(settings, methods).values())


def passes_after_each(settings: ExplainSettings, methods: Sequence[str]) -> list[float]:
    """The passes spent once each of the methods, in order, has scored the window (the recording forward first): a
    progress report's share of the work."""
    passes, spent = method_passes(settings, methods), FORWARD
    return [spent := spent + passes[name] for name in methods]


def deletion_variants(methods: Sequence[str], draws: int, k: int, fractions: int, bins: int, naopc_beam: int,
                      words: int) -> int:
    """At most how many variants the deletion test answers: every ranking's curve (k + 1 counts), fractions and
    ERASER's bins deleted and kept (no set being shared), the re-answers of the summaries that perturb the input their
    own way (rcqa.faithfulness.summaries), and the NAOPC search's 2 · beam · words · k."""
    rankings = sum(len(METHODS[name].rankings) for name in methods if name != RandomBaseline.name) + draws
    own = sum(summary.variants for summary in SUMMARIES.values())
    return rankings * (k + 1 + fractions + 2 * bins + own) + search_variants(naopc_beam, words, k)


def search_variants(naopc_beam: int, words: int, k: int) -> int:
    """The variants the NAOPC search answers: 2 · beam · words · k (its least and greatest AOPC)."""
    return 2 * naopc_beam * words * k


def pass_seconds(qa_model: QAModel, passes: float, tokens: int) -> float:
    """`passes` passes through every block of a window of `tokens` tokens, on this server."""
    return block_seconds(qa_model, passes * qa_model.num_layers, tokens)


def comparison_seconds(qa_model: QAModel, settings: ExplainSettings, methods: Sequence[str], protocol,
                       tokens: int) -> float:
    """The expected seconds of one comparison (rcqa.faithfulness.compare.compare) on a window of `tokens` tokens;
    the deletable words are counted as the tokens (an upper bound)."""
    variants = deletion_variants(methods, protocol.draws, protocol.k, len(protocol.fractions), len(protocol.bins),
                                 protocol.naopc_beam, tokens)
    return pass_seconds(qa_model, scoring_passes(settings, methods) + FORWARD * variants, tokens)
