"""The ``radar`` command line: the top of the house.

It may import every layer (``radar_pipeline``, ``assets``, ``api``, ``evals``); nothing imports it.
The console script ``radar`` points at :data:`radar_cli.main.app`.
"""
