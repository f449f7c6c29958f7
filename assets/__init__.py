"""Dagster software-defined assets of Radar, one module per stage; ``definitions`` builds ``defs``."""
