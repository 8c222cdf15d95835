"""Developer tools beside the package: the sample and big-session generators (``tools.samples``) and
the harness that runs pi's published code (``tools/pi-oracle/``, node). Run from the repository root."""
