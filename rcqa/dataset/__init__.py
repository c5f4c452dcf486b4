"""Whole-dataset runs: explain every example on a Dask cluster into a resumable Parquet store
(runner.py schedules, rows.py turns one explanation into one row, store.py keeps shards and the manifest, manifest.py
types it, aggregate.py averages a run into a summary.py DatasetSummary, figures.py draws its summaries and views.py
registers its views, report.py writes the offline report)."""
