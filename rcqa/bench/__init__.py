"""The benchmarks behind docs/speed.md, each reachable as `python -m rcqa bench`:

against_captum   (bench) the engine against the Captum loop users write today, on the same model and input:
                 the same work, the time to the same accuracy, every layer at the defaults and at fixed steps,
                 the disk cache, and (--matmul-precision) faster, less exact matrix products.
completeness     (bench --completeness) the completeness error and the words with attribution per layer over
                 the gallery.
passage          (bench --windows N) a passage of N windows explained whole against its N windows explained one
                 after another, each side in a fresh process with its peak memory.
attnlrp          (bench --method attnlrp) AttnLRP against IG's defaults, every layer, in one run.
"""

# the layer-wise methods with a benchmark of their own against IG's defaults (bench --method NAME: rcqa.bench.NAME,
# whose run and format_table it calls), named here so that the CLI's parser offers them without importing torch
METHOD_BENCHES = ("attnlrp",)
