"""rcqa's dashboard: `streamlit run app.py`. The pages live in pages/, the logic in rcqa/."""
import streamlit as st

st.set_page_config(page_title="rcqa", layout="wide")
st.navigation([
    st.Page("pages/explore.py", title="Explore a question", icon=":material/search:", default=True),
    st.Page("pages/compare_layers.py", title="Compare layers", icon=":material/layers:"),
    st.Page("pages/methods.py", title="Which explanation to trust", icon=":material/fact_check:"),
    st.Page("pages/dataset.py", title="Dataset", icon=":material/dataset:"),
    st.Page("pages/model.py", title="Model", icon=":material/memory:"),
]).run()
