"""rcqa's dashboard from a checkout: `streamlit run app.py` (installed, the same dashboard is `rcqa app`).

From here the Dataset page shows the checkout's committed runs (reports/runs), unless RCQA_RUNS names others."""
import os
from pathlib import Path

# multiprocessing's spawn runs the main script again, as __mp_main__, in every worker process the app starts (during
# a page's run Streamlit's __main__ is this script): a worker needs none of it, nor streamlit
if __name__ != "__mp_main__":
    os.environ.setdefault("RCQA_RUNS", str(Path(__file__).resolve().parent / "reports" / "runs"))

    from rcqa.ui.dashboard.app import main  # the runs are chosen before the app reads them

    main()
