"""The ingest service: runs written over HTTP(S) by machines without the store's folder.

``spherescope up`` starts it beside the dashboard (``python -m worker.ingest``). It
takes what ``db.remote.RemoteStore`` sends and writes it through ``db`` alone, as a
local writer would: run creation and claim answered at once, then numbered batches of
operations applied in order, each at most once (``apply``)."""
