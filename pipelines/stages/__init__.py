"""The stages one source's pages pass through, in order, each a module with one job:

1. fetch: `pipelines/sources/streams.py` pages the service through `pipelines/client`;
2. `land`: hides e-mail addresses, writes every page raw (`warehouse/raw.py`);
3. `typed`: adds the columns the service brought, types batches of pages into frames
   (`transforms/`), spools them (`warehouse/spool.py`);
4. `check`: the tables' contracts (`warehouse/contracts.py`), partition by partition;
5. `publish`: the partitions that kept them, to the lake (`warehouse/lake.py`).

`pipelines/extract.py` composes them, window by window; `outcome.py` is what they report.
Loading DuckDB from the lake is the warehouse asset's job (`warehouse/build.py`).
"""
