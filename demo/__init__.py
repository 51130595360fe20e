"""Demo live sources that ship with the repository (FICTIONAL data, labelled as such): servers a newcomer
starts next to ``ACEH_CONFIG=configs/demo_sources.yaml make serve``. Nothing here is imported by serve_app."""
