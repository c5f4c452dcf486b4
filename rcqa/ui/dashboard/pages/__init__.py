"""The dashboard's pages: layout and widgets only, run by path by app.py's st.navigation (a package only so that
lint-imports checks them: they reach the model, its answers and text handling through rcqa.ui)."""
