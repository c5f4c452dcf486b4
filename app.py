"""rcqa's dashboard from a checkout: `streamlit run app.py` (installed, the same dashboard is `rcqa app`).

From here the Dataset page shows the checkout's committed runs (reports/runs), unless RCQA_RUNS names others."""
import os
from pathlib import Path

os.environ.setdefault("RCQA_RUNS", str(Path(__file__).resolve().parent / "reports" / "runs"))

from rcqa.ui.dashboard.app import main  # noqa: E402 (the runs are chosen before the app reads them)

main()
