"""The analysis registry (rcqa.analysis.registry): every registered analysis keeps its result through JSON and fills
its dataset columns, and the analysis added through it (agreement) reaches the CLI, `reproduce`, the API and a figure
with numbers an independent reference gives (scipy's Spearman, top-k overlaps counted by hand)."""
import json
import math

import numpy as np
import pyarrow as pa
import pytest
from scipy.stats import spearmanr

from rcqa.analysis.agreement import LayerAgreement, MethodAgreement
from rcqa.analysis.plausibility import MEASURES, RANKINGS, Plausibility
from rcqa.analysis.pos import GROUPS, PosShares
from rcqa.analysis.registered import ANALYSES, OPTIONAL, analysis
from rcqa.analysis.registry import Inputs, figure_of
from rcqa.analysis.roles.result import RoleShares
from rcqa.analysis.similarity import VARIANTS, LayerSimilarity
from rcqa.analysis.words import passage_distribution, word_scores
from rcqa.attribution.explanation import explain
from rcqa.attribution.settings import ExplainSettings
from rcqa.gallery import gallery_example

FAST = ExplainSettings(steps=3, tolerance=None)
LAYERS = ["embeddings", "block 0", "block 1"]

# one result per registered analysis, written out by hand (a new analysis without one fails the first test)
HAND_BUILT = {
    "roles": RoleShares({"answer": [20.0, None, 40.0], "supporting": [0.0, None, 20.0], "query": [40.0, None, 0.0]},
                        {"answer": "answer", "supporting": "supporting", "query": "query"},
                        [{"layers": "embeddings", "reading": "mostly query words (query 60%): matching…"}],
                        None, [12.5, None, 61.0], [40.0, None, 40.0]),
    "pos": PosShares({group: [10.0 * i, None, 0.0] for i, group in enumerate(GROUPS)},
                     {group: 100.0 if group == "entity" else 0.0 for group in GROUPS}),
    "similarity": LayerSimilarity(LAYERS, 5, {variant: [[0.0, 0.25, None], [0.25, 0.0, None], [None, None, None]]
                                              for variant in VARIANTS}),
    "plausibility": Plausibility({ranking: {measure: [1.0, None, 0.3333] for measure in MEASURES}
                                  for ranking in RANKINGS}),
    "agreement": MethodAgreement(("integrated_gradients", "attnlrp"), "l2", 5,
                                 [LayerAgreement("embeddings", 0.5, 0.4), LayerAgreement("block 0", -1.0, 0.0),
                                  LayerAgreement("block 1", 1.0, 1.0)]),
}


def test_every_registered_analysis_round_trips_through_json_and_fills_its_own_columns():
    assert set(HAND_BUILT) == set(ANALYSES)
    for name, built in HAND_BUILT.items():
        entry = analysis(name)
        assert isinstance(built, entry.result_type)
        assert entry.load(json.loads(json.dumps(built.to_dict()))) == built
        assert list(built.row()) == list(entry.columns)


def test_an_undefined_rank_correlation_is_null_in_json_and_nan_back():
    undefined = MethodAgreement(("integrated_gradients", "attnlrp"), "l2", 3, [LayerAgreement("block 0", math.nan, 1.0)])
    document = json.loads(json.dumps(undefined.to_dict()))
    assert document["layers"] == [{"layer": "block 0", "spearman": None, "top_k_overlap": 1.0}]
    assert math.isnan(MethodAgreement.from_dict(document).layers[0].spearman)
    assert json.loads(undefined.row()["agreement"]) == document


def test_an_unknown_analysis_is_refused_by_name():
    with pytest.raises(ValueError, match="unknown analysis 'roles2'; choose one of roles, pos, similarity, plausibility, agreement"):
        analysis("roles2")


def test_an_optional_analysis_is_one_json_column_named_after_it():
    from dataclasses import replace

    with pytest.raises(ValueError, match="'agreement' fills one JSON column named after it"):
        replace(analysis("agreement"), columns={"agreement_layers": "json"})


def test_agreement_needs_its_companion_explanation():
    with pytest.raises(ValueError, match="compares with an attnlrp explanation of the same question"):
        analysis("agreement").run(Inputs(None))


@pytest.fixture(scope="module")
def explained(tiny_bert):
    """IG's and AttnLRP's explanations of one question, and the agreement analysis of them (through rcqa.analysis_run)."""
    from rcqa.analysis_run import run_analysis

    example = gallery_example("orchard-how-many")
    ig, lrp = explain(tiny_bert, example, FAST), explain(tiny_bert, example, ExplainSettings(method="attnlrp"))
    return ig, lrp, run_analysis("agreement", tiny_bert, ig, FAST, "l2", 3)


def test_agreement_against_scipy_and_top_k_counted_by_hand(explained):
    ig, lrp, found = explained
    assert found.methods == ("integrated_gradients", "attnlrp") and found.k == 3
    assert [row.layer for row in found.layers] == ig.layers
    ours, theirs = passage_distribution(ig, "l2"), passage_distribution(lrp, "l2")
    for layer, row in enumerate(found.layers):
        assert row.spearman == pytest.approx(spearmanr(ours[layer], theirs[layer]).statistic)
        top_ig = set(np.argsort(-ours[layer], kind="stable")[:3])
        top_lrp = set(np.argsort(-theirs[layer], kind="stable")[:3])
        assert row.top_k_overlap == pytest.approx(len(top_ig & top_lrp) / 3)
    # signed against signed as well: the signed word scores' ranks, and the k words that support the target most
    words = ig.passage_indices()
    signed_ig, signed_lrp = word_scores(ig, "sum")[:, words], word_scores(lrp, "sum")[:, words]
    for layer, row in enumerate(found.by_score["sum"]):
        assert row.spearman == pytest.approx(spearmanr(signed_ig[layer], signed_lrp[layer]).statistic)
        top_ig = {i for i in np.argsort(-signed_ig[layer], kind="stable")[:3] if signed_ig[layer, i] > 0}
        top_lrp = {i for i in np.argsort(-signed_lrp[layer], kind="stable")[:3] if signed_lrp[layer, i] > 0}
        assert row.top_k_overlap == pytest.approx(len(top_ig & top_lrp) / 3)


def test_agreement_is_the_same_whichever_method_explained_first(tiny_bert, explained):
    from rcqa.analysis_run import run_analysis

    ig, lrp, found = explained
    from_lrp = run_analysis("agreement", tiny_bert, lrp, ExplainSettings(method="attnlrp", steps=3, tolerance=None), "l2", 3)
    assert from_lrp.methods == found.methods
    assert from_lrp.to_dict() == found.to_dict()


def test_the_agreement_takes_the_two_methods_it_compares_as_arguments(tiny_bert, explained):
    """Any two layer-wise methods: gradient × activation's explanation against IG's, its rows IG's against it."""
    from rcqa.analysis.agreement import agreement_analysis, layer_agreement
    from rcqa.analysis.registry import Inputs as AnalysisInputs

    ig, _, _ = explained
    other = explain(tiny_bert, ig.example, ExplainSettings(method="gradient_x_activation"))
    compared = agreement_analysis(("gradient_x_activation", "Gradient × activation"), ("integrated_gradients", "IG"))
    assert compared.title == "Gradient × activation and IG on this question"
    assert compared.companion_of("integrated_gradients") == "gradient_x_activation"
    found = compared.run(AnalysisInputs(ig, "l2", 3, method="integrated_gradients", companion=other))
    assert found.methods == ("gradient_x_activation", "integrated_gradients")
    expected = layer_agreement(other, ig, "l2", 3)  # the first method's against the second's
    np.testing.assert_array_equal([row.spearman for row in found.layers], [row.spearman for row in expected])
    assert [row.top_k_overlap for row in found.layers] == [row.top_k_overlap for row in expected]


def test_agreement_figure_draws_the_analysis(explained):
    import rcqa.figures  # noqa: F401 (registers the figures)

    ig, _, found = explained
    for name in ANALYSES:
        assert callable(figure_of(name))
    chart = figure_of("agreement")(found, Inputs(ig, "l2", 3))
    # the chosen score (L2 against L2) first, then signed against signed: each its ρ and its top-k overlap
    assert list(found.by_score) == ["sum"]
    traces = chart.figure.data
    for (correlation, overlap), rows in zip((traces[:2], traces[2:]), (found.layers, found.by_score["sum"])):
        assert np.allclose(np.array(correlation.y, dtype=float), [row.spearman for row in rows], equal_nan=True)
        assert list(overlap.y) == [row.top_k_overlap for row in rows]
    assert [trace.name.split(", ")[-1] for trace in traces] == ["L2 vs L2"] * 2 + ["signed vs signed"] * 2
    assert chart.figure.layout.title.text.startswith("How far AttnLRP agrees with Integrated Gradients")


def analyze_cli(tmp_path, model_dir: str, name: str, *options: str) -> dict:
    """`python -m rcqa analyze NAME` on the orchard question with fast IG settings; its JSON."""
    from rcqa.cli import main

    example = gallery_example("orchard-how-many")
    passage = tmp_path / "passage.txt"
    passage.write_text(example.passage)
    out = tmp_path / f"{name}.json"
    assert main(["analyze", name, "--passage-file", str(passage), "--question", example.question, "--json", str(out),
                 "--model", model_dir, "--steps", "3", "--tolerance", "0", "--no-cache", *options]) == 0
    return json.loads(out.read_text())


def test_analyze_verb_writes_the_documented_json(tmp_path, tiny_model_dirs, explained):
    document = analyze_cli(tmp_path, tiny_model_dirs["bert"], "agreement", "--top-k", "3")
    assert {key: document[key] for key in ("analysis", "method", "aggregation", "k")} == {
        "analysis": "agreement", "method": "integrated_gradients", "aggregation": "l2", "k": 3}
    assert document["result"] == explained[2].to_dict()


def test_similarity_verb_takes_its_own_option(tmp_path, tiny_model_dirs):
    document = analyze_cli(tmp_path, tiny_model_dirs["bert"], "similarity", "--variant", "topk_kept")
    assert list(document["result"]["jsd"]) == ["topk_kept"]


def test_reproduce_offers_each_optional_analysis_and_fills_its_column(tiny_model_dirs, explained):
    from rcqa.cli import build_parser
    from rcqa.dataset.rows import SCHEMA
    from rcqa.dataset.runner import Job, explain_chunk

    assert OPTIONAL == ("agreement",)
    assert build_parser().parse_args(["reproduce", "--data", "d.json", "--out", "o", "--agreement"]).agreement
    job = Job(tiny_model_dirs["bert"], FAST, "l2", 3, extras=("agreement",))
    rows, failures, _ = explain_chunk(job, [gallery_example("orchard-how-many")])
    assert failures == []
    table = pa.Table.from_pylist(rows, schema=SCHEMA)
    assert json.loads(table.column("agreement")[0].as_py()) == explained[2].to_dict()
    without, _, _ = explain_chunk(Job(tiny_model_dirs["bert"], FAST, "l2", 3), [gallery_example("orchard-how-many")])
    assert without[0]["agreement"] is None


def test_api_analyze_gives_the_typed_result(tiny_bert, explained):
    import rcqa

    example = gallery_example("orchard-how-many")
    found = rcqa.analyze("agreement", tiny_bert, example.passage, example.question, k=3, steps=3, tolerance=None)
    assert isinstance(found, MethodAgreement) and found.to_dict() == explained[2].to_dict()
    roles = rcqa.analyze("roles", tiny_bert, example.passage, example.question, k=3, steps=3, tolerance=None)
    assert isinstance(roles, RoleShares) and len(roles.categories["answer"]) == len(explained[0].layers)
