"""The run store: runs, their status and logged values as Parquet files, read with DuckDB.

No torch, no streamlit. See ``docs/architecture.md`` (sections db and db.queries).
"""

from db.records import STATUSES, RunRecord
from db.store import RunStore
from db.tracker import StoreTracker, StoreWriteError

__all__ = ["STATUSES", "RunRecord", "RunStore", "StoreTracker", "StoreWriteError"]
