"""The Streamlit side of rcqa, the only part of it that imports streamlit: view (what the pages show, and its URL),
examples (gallery, uploads, paste), inputs (the loaded model and a page's inputs), results (caches and the
requests for heavy work), queue (submitting and awaiting that work), show (charts, HTML and errors on a page),
runs (the Dataset page's runs), with jobs and worker (the queue and its worker processes, no streamlit)."""
