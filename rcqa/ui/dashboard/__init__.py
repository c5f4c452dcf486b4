"""The dashboard: app.py (Streamlit's main script) and its pages/, which st.navigation runs by path. A package so that
lint-imports checks what they import (setup.cfg); Streamlit itself never imports them as modules. explore_tabs.py
holds the Explore page's explanation tabs, which the page imports (the pages contract covers it too)."""
