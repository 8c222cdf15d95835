"""The Load page (drawn by inspector.ui.pages)."""


from inspector.ui import pages

pages.load_page()
