"""What is produced: Dagster assets and their checks, one module per extraction step (the
current state, the dated facts), the marts, and the lake's housekeeping.

Every process that runs the pipeline imports this package before Polars (the `adwh` CLI, the
code location's run workers), so this is where the allocator Polars ships is told to give
memory back as soon as it is freed. Polars' jemalloc keeps freed pages by default, for speed:
a run's peak held ~90 MiB of them (one `medium` account, 90 days: 585 MiB instead of 678, for
~7 % more wall time; bench/SCALE.md, "Issue 59"). `_RJEM_MALLOC_CONF` is Polars' own way in:
its `__init__` puts its defaults before the value it finds, and jemalloc, reading it once when
Polars' library loads, takes each option's last value (pola-rs/polars#18088, #21829). A value
the user set is kept.
"""

import os

os.environ.setdefault("_RJEM_MALLOC_CONF", "dirty_decay_ms:0,muzzy_decay_ms:0")
