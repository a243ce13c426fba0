"""The generators behind ``benchmarks/make_dev_material.py``, one module per family of kinds.

A package of its own so that each family (entity-page chains, pooled and per-user memories) can be read,
and grow, apart from the command line that picks among them; ``sources`` holds what they all draw from.
"""
