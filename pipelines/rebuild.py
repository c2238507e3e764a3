"""`adwh rebuild`: re-derive the lake and the warehouse from raw pages, with no request sent.

Useful after a fix to a transform or a contract: the typed layer is rebuilt from what the
service already sent, spending no credits and no rate limit.
"""

import uuid
from datetime import date

from pipelines.execute import RunSummary, TableLine
from pipelines.extract import Destination, rebuild_source
from pipelines.settings import Settings
from pipelines.sources import SOURCES
from warehouse.build import build_warehouse


def rebuild(settings: Settings, start: date, end: date) -> RunSummary:
    destination = Destination(settings.home)
    destination.lake.clean_staging()
    summary = RunSummary(start, end)
    run_id = f"rebuild-{uuid.uuid4().hex[:12]}"
    for source in SOURCES:
        for name, outcome in rebuild_source(destination, source, start, end, run_id).items():
            summary.tables.append(TableLine(name, outcome.as_metadata()))
            if outcome.held_back and not summary.failure:
                summary.failure = outcome.held_back[0]
    build_warehouse(settings.home, [o.schema for s in SOURCES for o in s.outputs])
    return summary
