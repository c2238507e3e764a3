"""`make bench`: the pipeline against the fetch floor and a peer loader (dlt), on one machine."""
