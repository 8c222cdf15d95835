"""The Compare page (drawn by inspector.ui.pages)."""

import streamlit as st

from inspector.ui import pages

pages.compare_page(st.session_state["_settings"])
