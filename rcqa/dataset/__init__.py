"""Whole-dataset runs: explain every example on a Dask cluster into a resumable Parquet store
(runner.py schedules, rows.py turns one explanation into one row, store.py keeps shards and the manifest,
aggregate.py averages a run, figures.py draws its summaries, report.py writes the offline report)."""
