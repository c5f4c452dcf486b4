"""The benchmarks behind docs/speed.md, each reachable as `python -m rcqa bench`:

against_captum   (bench) the engine against the Captum loop users write today, on the same model and input:
                 the same work, the time to the same accuracy, every layer at the defaults and at fixed steps,
                 the disk cache, and (--matmul-precision) faster, less exact matrix products.
completeness     (bench --completeness) the completeness error and the words with attribution per layer over
                 the gallery.
passage          (bench --windows N) a passage of N windows explained whole against its N windows explained one
                 after another, each side in a fresh process with its peak memory.
"""
