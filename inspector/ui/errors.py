"""What a visitor sees when a page fails: a short message with a reference, never a traceback.

The traceback (with the server's paths) goes to the server's log under the same reference, so
the operator can find it. The message is drawn with ``st.exception`` of a fresh exception that was
never raised — it carries no frames — so Streamlit shows only its one line, and tests (AppTest's
``exception`` elements) still see that the page failed.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Iterator
from contextlib import contextmanager

import streamlit as st

LOG = logging.getLogger("inspector.app")


class PageError(Exception):
    """Shown instead of a traceback."""


@contextmanager
def guard() -> Iterator[None]:
    """Run the app's body; any error becomes a one-line message with a reference id."""
    try:
        yield
    except Exception as e:  # Streamlit's st.stop/st.rerun are BaseExceptions: they pass
        ref = secrets.token_hex(4)
        LOG.error("page error, reference %s: %s", ref, type(e).__name__, exc_info=e)
        st.exception(
            PageError(
                f"Something went wrong while drawing this page (reference {ref}). The details "
                "are in the server's log; reloading the page or loading another session may help."
            )
        )
