"""The Summaries page (drawn by inspector.ui.pages)."""

import streamlit as st

from inspector.ui import pages

pages.summaries_page(st.session_state["_settings"])
