"""Glue between ``simulations/`` and sphinx-gallery (named by dotted path in ``docs/conf.py``).

Every experiment file is run as ``python <file> --gallery``: quick settings,
no files written, one figure per experiment handed to pyplot for the
matplotlib scraper (see :func:`expertlab.sim.experiment_main`).
"""


def reset_argv(gallery_conf, script_vars):
    """Command-line arguments of an experiment file run by sphinx-gallery."""
    return ["--gallery"]
