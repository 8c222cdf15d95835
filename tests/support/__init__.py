"""Helpers the tests import (``from .support.X import ...``); ``conftest.py`` holds only fixtures.

* ``paths``: where the repository, its test fixtures and (optionally) ``../shared`` are;
* ``builder``: ``SessionBuilder``, pi v3 sessions written in a few lines;
* ``pi_oracle``: the project's own harness running pi's published code (``tools/pi-oracle``),
  installed with ``npm ci`` into a temporary folder, and the fixture runs it regenerates;
* ``pi_compare``: our comparison of an oracle-shaped JSON with pi's;
* ``randsession``: random valid pi sessions for the differential test;
* ``opencode_export``: OpenCode exports with DCP's ``compress`` calls, by hand or at random
  (``bench/dcp.py`` writes its exports with it too).
"""
