"""The Streamlit side of rcqa, the only part of it that imports streamlit: the dashboard (dashboard/: app.py, its
pages/ and its .streamlit/ settings, alone in their folder because Streamlit puts the main script's folder first on
sys.path, where queue.py here would hide the standard library's queue); view (what the pages show, and its URL),
examples (gallery, uploads, paste), inputs (the loaded model and a page's inputs), results/ (caches and the requests
for heavy work), queue (submitting and awaiting that work), show (charts, HTML and tables on a page), errors
(what a visitor is told went wrong), runs (the Dataset page's runs), with jobs, capacity, worker and child (the
queue, what the operator sets for it, its worker processes and what runs in them, no streamlit)."""
from pathlib import Path

PAGES = Path(__file__).resolve().parent / "dashboard" / "pages"  # absolute: the app may start from the checkout's app.py
