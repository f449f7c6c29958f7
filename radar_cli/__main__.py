"""``python -m radar_cli`` runs the ``radar`` command line."""

from radar_cli.main import app

app()
