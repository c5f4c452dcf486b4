"""rcqa's dashboard: `rcqa app` (or, from a checkout, `streamlit run app.py`). The pages are the scripts in pages/
beside this file; its Streamlit settings are .streamlit/config.toml beside it (Streamlit reads a main script's own)."""


import sys


def main() -> None:
    # imported here: multiprocessing runs this script (the main script of `rcqa app`) again, as __mp_main__,
    # in every worker process the app starts, and a worker needs no streamlit
    import streamlit as st

    from rcqa.ui import PAGES, page_timing
    from rcqa.ui.visitors import admitted

    page_timing.install()  # only where $RCQA_PAGE_TIMING_LOG asks for the server's own times to first answers

    # an emoji favicon is drawn in the browser: without one, Streamlit shows each page's :material/ icon as the
    # favicon, fetched from fonts.gstatic.com (the icons in the page itself come with Streamlit's own files)
    st.set_page_config(page_title="rcqa", page_icon="🔎", layout="wide")
    # Streamlit opens a page 6rem below its header: 70 px of a 900 px screen that the layers' picture needs
    st.html("<style>[data-testid=stMainBlockContainer] {padding-top: 3.75rem}</style>")
    if not admitted():  # its address has the most sessions open: one sentence is shown, and nothing else
        st.stop()
    page = st.navigation([
        st.Page(PAGES / "explore.py", title="Explore a question", icon=":material/search:", default=True),
        st.Page(PAGES / "compare_layers.py", title="Compare layers", icon=":material/layers:"),
        st.Page(PAGES / "side_by_side.py", title="Side by side", icon=":material/compare:"),
        st.Page(PAGES / "methods.py", title="Which explanation to trust", icon=":material/fact_check:"),
        st.Page(PAGES / "dataset.py", title="Dataset", icon=":material/dataset:"),
        st.Page(PAGES / "model.py", title="Model", icon=":material/memory:"),
    ], position="top")  # the pages along the top: the sidebar's 300 px went to the layers at every width
    # a server's first page imports torch and transformers (5-8 s on 2 cores) before it can draw a line: say what is
    # loading first, so that a visitor sees a page at once rather than a white one
    loading = st.empty() if "torch" not in sys.modules else None
    if loading is not None:
        loading.info(f"{page.title}: loading the explanation engine and the model, about 10 s on a server's first "
                     "page…", icon=":material/hourglass_top:")
    page.run()
    if loading is not None:
        loading.empty()


if __name__ == "__main__":  # Streamlit runs its main script as __main__
    main()
