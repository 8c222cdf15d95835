"""The Replay page (drawn by inspector.ui.pages)."""

import streamlit as st

from inspector.ui import pages

pages.replay_page(st.session_state["_settings"])
