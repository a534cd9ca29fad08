"""The Celery application: settings only (broker from ``REDIS_URL``, JSON, time limits).

Execution model (see ``docs/architecture.md``, section worker):
- prefork pool with ``worker_max_tasks_per_child = 1``: every run gets a fresh child
  process, forked from a parent that never imports torch, so CUDA is never initialised
  before a fork. The child imports torch and the engine while idle
  (``worker.celery_hooks``), so a warm worker starts a run without paying for imports.
- tasks are acknowledged early (``acks_late = False``) and the worker takes a message
  only when a pool process is free (``worker_disable_prefetch``): Redis never
  redelivers a long run; the truth about a run lives in the store (status + heartbeat).
"""

from __future__ import annotations

import logging
import warnings

from celery import Celery
from celery.exceptions import SecurityWarning

from worker import settings

# Celery warns at every worker start when it runs as root (containers, CI). The risk it
# names is unpickling messages as root; this app accepts JSON only (``accept_content``
# below, and Celery refuses to start as root with pickle unless C_FORCE_ROOT is set),
# so the warning says nothing here. Only that message is silenced, and C_FORCE_ROOT is
# never set: a pickle configuration would still be refused.
warnings.filterwarnings(
    "ignore",
    message="You're running the worker with superuser privileges",
    category=SecurityWarning,
)
# faiss logs "Loading faiss with AVX2 support" at INFO in every fresh child (one per run).
logging.getLogger("faiss.loader").setLevel(logging.WARNING)

app = Celery("spherescope", include=["worker.tasks", "worker.celery_hooks"])
app.conf.update(
    # empty when nothing is configured: ``broker_url()`` then explains, never a default
    broker_url=settings.configured_redis_url() or None,
    broker_connection_retry_on_startup=True,
    broker_connection_max_retries=None,  # a restarted Redis is waited for, not fatal
    broker_transport_options={"visibility_timeout": 3600},
    task_serializer="json",
    accept_content=["json"],
    result_serializer="json",
    task_ignore_result=True,  # results live in the run store
    task_default_queue=settings.CPU_QUEUE,
    task_acks_late=False,
    task_reject_on_worker_lost=False,
    task_time_limit=settings.task_time_limit(),
    task_soft_time_limit=settings.task_time_limit() - 60,
    worker_prefetch_multiplier=1,
    worker_disable_prefetch=True,
    worker_max_tasks_per_child=1,
    worker_proc_alive_timeout=120.0,  # the child imports torch before it reports up
    worker_cancel_long_running_tasks_on_connection_loss=False,
    worker_hijack_root_logger=False,
)


def broker_url() -> str:
    """The broker of this process (``REDIS_URL`` or the running stack's); raises
    ``settings.BrokerNotConfigured`` (a one-line ValueError) when there is none."""
    if not app.conf.broker_url:
        app.conf.broker_url = settings.redis_url()
    return str(app.conf.broker_url)
