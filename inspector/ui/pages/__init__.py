"""The app's pages, one Streamlit page script per file (run by path by ``st.Page`` in ``app.py``)."""
