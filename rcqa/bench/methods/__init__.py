"""The layer-wise methods' own benchmarks against IG's defaults (bench --method NAME), one module each, named as the
method is (rcqa.attribution.layerwise's registry): each has run(qa_model, tokens, repeats) and format_table(found)."""
