"""A committed report's per-run tables are those of the runs it reports: `report` writes one JSD table per run and
variant, named after the run, and a table left from an earlier report of other runs (the 500-question runs' beside
the 1,000-question report in reports/squad-dev) would be read as this report's."""
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
REPORTS = sorted(path.parent for path in (ROOT / "reports").glob("**/summary.json") if (path.parent / "tables").is_dir())


def test_there_are_committed_reports_with_tables():
    assert ROOT / "reports" / "squad-dev" in REPORTS


@pytest.mark.parametrize("report", REPORTS, ids=lambda path: str(path.relative_to(ROOT / "reports")))
def test_each_jsd_table_is_one_of_a_run_the_report_covers(report):
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    runs = [summary["run"], *summary.get("compared_runs", {})]
    # "squad-dev-1000-default (default)" is written as "squad-dev-1000-default-default"
    slugs = {re.sub(r" \((.*)\)$", r"-\1", name) for name in runs}
    tables = {re.fullmatch(r"dataset-jsd-(?:full|topk_kept|topk_removed)-(.+)\.csv", path.name).group(1)
              for path in (report / "tables").glob("dataset-jsd-*.csv")}
    assert tables == slugs, f"{report}: tables of {sorted(tables - slugs)} beside the report of {sorted(slugs)}"
