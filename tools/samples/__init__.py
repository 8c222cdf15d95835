"""The generators of the bundled sample sessions and of big sessions for benchmarks:

    python -m tools.samples.generate [OUTDIR]      # the samples (default: sample_sessions/)
    python -m tools.samples.gen_big --entries N --out FILE

``sessiongen`` holds the building blocks both use; ``gen_agents`` the other agents' formats."""
