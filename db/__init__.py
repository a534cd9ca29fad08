"""The run store: runs, their status and logged values as Parquet files, read with DuckDB.

No torch, no streamlit. See ``docs/architecture.md`` (sections db and db.queries).
"""

from db.catalogue import ending
from db.file_catalogue import FileCatalogue
from db.records import STATUSES, RunRecord
from db.store import RunStore
from db.tracker import StoreTracker, StoreWriteError

__all__ = ["STATUSES", "RunRecord", "RunStore", "StoreTracker", "StoreWriteError"]


def _record_findings(catalogue: FileCatalogue, run_id: str) -> None:
    from db.findings import record_findings_quietly  # pandas: only once a run ends

    record_findings_quietly(RunStore(catalogue.home), run_id)


# Every run's end stores its findings (``db.catalogue.ending``, below the facade the
# findings read through): wired here, at the top of the package.
ending.register_findings(_record_findings)
