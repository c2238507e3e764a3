"""The `adwh` launcher: the layer on top, above the Dagster definitions (`assets/`).

One module per subcommand (`launcher/commands/`), each registering its parser; what launches
and follows runs beside them: in process (`execute.py`), through the webserver (`backfill.py`,
`backfill_watch.py`), the UI (`ui.py`), and what a run's summary says (`report.py`).
"""
