"""The Load page (drawn by inspector.ui.pages)."""

import streamlit as st

from inspector.ui import pages

pages.load_page()
