"""SphereScope for your own training code: embedding-geometry diagnostics in a few lines.

    import spherescope

    with spherescope.init(name="cub-resnet50", config=vars(args)) as run:
        for step, (images, labels) in enumerate(loader, 1):
            embeddings = model(images)
            run.log_embeddings(embeddings, labels, step=step)
            loss = loss_fn(embeddings, labels)
            loss.backward(); optimizer.step(); optimizer.zero_grad()
            run.log({"loss/total": loss.item()}, step=step)

Runs are written to the store under ``home`` (default ``$SPHERESCOPE_HOME``) as kind
``external`` and show in the dashboard like launched runs. This package imports
neither Celery nor Streamlit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from importlib.metadata import PackageNotFoundError, version
from typing import Any

from spherescope.run import Run

try:
    __version__ = version("spherescope")
except PackageNotFoundError:  # a source checkout that is not installed
    __version__ = "0+unknown"

__all__ = ["Run", "__version__", "init"]


def init(
    name: str | None = None,
    config: Mapping[str, Any] | None = None,
    tags: Iterable[str] = (),
    home: str | None = None,
    log_every: int = 1,
    tracked: Any = None,
    strict: bool = False,
    scope: str = "global",
    launcher: str | None = None,
    project: str | None = None,
) -> Run:
    """Start a run in the store and return it (use it as a context manager).

    - ``config``: the run's settings (e.g. ``vars(args)``), shown and diffed in Compare;
    - ``log_every``: ``log_embeddings`` computes diagnostics on every N-th step;
    - ``tracked``: ``(inputs, forward_fn)`` to follow a fixed set of samples (their norms
      and how far they turn), or a sequence of sample ids (pass ``sample_ids`` to
      ``log_embeddings``);
    - ``strict``: raise on a failed store write instead of warning and buffering;
    - ``scope``: in a data-parallel job (an initialised ``torch.distributed`` process
      group, or torchrun / srun / Accelerate / Lightning's environment), ``"global"``
      makes every statistic one of the global batch (gathered on the logged steps;
      every rank calls ``init``, ``log_embeddings`` and ``evaluate``); ``"rank0"``
      records rank 0's own batch, without communication. Either way the job is one
      run, created by rank 0, the only rank that touches the store;
    - ``launcher``: how the job was launched, recorded with the run (the framework
      callbacks name their strategy; default: as detected);
    - ``project``: the project the run belongs to (default ``default``), which the
      dashboard filters by.
    """
    from db.store import RunStore
    from sphere_engine.distributed import detect

    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise ValueError(f"config must be a dict, got {type(config).__name__}")
    if isinstance(tags, str):
        tags = [tags]
    context = detect()
    return Run(
        RunStore(home) if context.is_main else None,
        name=name,
        config=dict(config),
        tags=tags,
        log_every=log_every,
        tracked=tracked,
        strict=bool(strict),
        context=context,
        scope=scope,
        launcher=launcher,
        project=project,
    )
