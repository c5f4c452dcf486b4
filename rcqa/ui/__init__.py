"""The Streamlit side of rcqa; state.py is its one bridge to Streamlit."""
