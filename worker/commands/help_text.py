"""The command line's shared help texts (plain text, kept as laid out)."""

DESCRIPTION = """\
SphereScope: embedding-geometry diagnostics for metric learning and face recognition.
Train a config in this process, analyze saved embeddings, export a run, or start the
stack (Redis, workers, dashboard)."""

ENVIRONMENT = """\
where runs are stored:
  every run (trained here, by a worker, or by the Python SDK) is a folder in the run
  store: SPHERESCOPE_HOME, default ./spherescope-data in the current directory.

environment variables:
  SPHERESCOPE_HOME               root of the run store (default ./spherescope-data)
  REDIS_URL                      Celery broker; unset: the private Redis started by
                                 "spherescope up" on this store
  SPHERESCOPE_TOKEN              password of a dashboard that listens beyond
                                 127.0.0.1 (up --host 0.0.0.0 requires it)
  SPHERESCOPE_HEARTBEAT_S        seconds between heartbeats of a running run (2)
  SPHERESCOPE_LOST_AFTER_S       a run silent this long is marked lost (15)
  SPHERESCOPE_REAPER_S           seconds between two lost-run checks of a worker (5)
  SPHERESCOPE_TASK_TIME_LIMIT_S  hard time limit of one worker task (172800)
  SPHERESCOPE_RECONCILE_S        seconds between two checks for queued runs the broker
                                 lost (30); they are sent again
  SPHERESCOPE_REQUEUE_AFTER_S    a queued run the broker does not hold is sent again
                                 after this long (60)
  SPHERESCOPE_WORKER_DEVICES     devices a worker advertises for training.devices
                                 (default: the GPUs it sees, else its CPU cores)
  SPHERESCOPE_URL                the stack's ingest service: runs of this machine are
                                 recorded there, not in SPHERESCOPE_HOME (with the token)
  SPHERESCOPE_CONNECT_WAIT_S     a run's start waits this long for the service (60)
  SPHERESCOPE_DRAIN_WAIT_S       a run's end waits this long to send what it holds (600)
  SPHERESCOPE_REMOTE_GRACE_S     a silent remote run is marked lost this much later (1800)
  SPHERESCOPE_INGEST_CERT        TLS certificate of "spherescope up"'s ingest service
  SPHERESCOPE_INGEST_KEY         and its key (both set: HTTPS)"""

ANALYZE_FORMATS = """\
accepted embeddings files (by suffix):
  .npz      arrays "embeddings" (N x d) and "labels" (N)
  .npy      the N x d embeddings; labels in a sibling file: X.npy with X_labels.npy,
            or embeddings.npy with labels.npy
  .parquet  one label column, "label" or "labels", and the coordinates as one
  .csv      list column "embedding" (in a CSV as text such as [0.1, 0.2]), or the
            columns c0, c1, ... when present, or else all other columns (numeric)
labels are integer class ids or class names (strings, mapped to ids in sorted order)."""

EXPORT_FORMATS = """\
formats:
  csv, parquet  three files in DIR: RUN_ID-scalars, RUN_ID-evals, RUN_ID-norms
  tensorboard   event files in DIR/RUN_ID, for: tensorboard --logdir DIR
                (needs the tensorboard package: pip install "spherescope[tensorboard]")"""
