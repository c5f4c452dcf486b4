"""The benchmarks behind docs/speed.md, each reachable as `python -m rcqa bench`:

against_captum   (bench) the engine against the Captum loop users write today, on the same model and input:
                 the same work, the time to the same accuracy, every layer at the defaults and at fixed steps,
                 the disk cache, and (--matmul-precision) faster, less exact matrix products.
completeness     (bench --completeness) the completeness error and the words with attribution per layer over
                 the gallery.
passage          (bench --windows N) a passage of N windows explained whole against its N windows explained one
                 after another, each side in a fresh process with its peak memory.
methods/         (bench --method NAME) a layer-wise method against IG's defaults, every layer, in one run: one
                 module per method, named as the method is (AttnLRP's, with its conservation).
"""
import pkgutil

from rcqa.bench import methods

# the layer-wise methods with a benchmark of their own (bench --method NAME: rcqa.bench.methods.NAME, whose run and
# format_table it calls), found by their modules' names, so that the CLI's parser offers them without importing torch
METHOD_BENCHES = tuple(sorted(module.name for module in pkgutil.iter_modules(methods.__path__)))
