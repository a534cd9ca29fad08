"""Synthetic runs written through the real ``RunStore.tracker`` (for the app's tests).

``fill_store(store)`` records three runs: a finished SEC run with a fixed simplex head
(scalars, tracked-sample norms, evaluations, two snapshots), a finished run without
regulariser in the same sweep, and a failed run with an error message; plus one
analysis run. Values follow simple closed forms so tests can assert on them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

from app.ui import FOLLOW_UP_KEY
from db.store import RunStore
from sphere_engine.config import RunConfig

STEPS = 60
NUM_CLASSES = 4
DIM = 3  # a 3-simplex head fits 4 classes


@dataclass
class Filled:
    sec: str
    plain: str
    failed: str
    analysis: str
    sweep_id: str

    @property
    def trained(self) -> list[str]:
        return [self.sec, self.plain]


def config(regularizer: str = "sec", weight: float = 0.5, head: str = "simplex") -> dict:
    data = {
        "data": {"name": "digits", "split": "standard", "batch_size": 32, "samples_per_class": 0},
        "model": {"name": "mlp", "embedding_dim": DIM},
        "objective": {"kind": "head", "name": head, "options": {"margin": "auto"}},
        "regularizer": {"name": regularizer, "weight": weight},
        "training": {"steps": STEPS, "seed": 0},
        "diagnostics": {"eval_every": 30},
    }
    return RunConfig.from_dict(data).to_dict()


def scalars(step: int, variance: float) -> dict[str, float]:
    mean = 2.0 + 0.01 * step
    std = math.sqrt(variance)
    return {
        "loss/total": 1.0 / (1 + step),
        "loss/metric": 0.9 / (1 + step),
        "loss/sec": variance,
        "norm/mean": mean,
        "norm/var": variance,
        "norm/std": std,
        "norm/cv": std / mean,
        "norm/min": mean - 2 * std,
        "norm/max": mean + 2 * std,
        "sec/mu_batch": mean,
        "sec/mu_ema": mean,
        "cos/pos": 0.5,
        "cos/neg": -0.1,
        "cos/gap": 0.6,
        "grad/norm_inv_corr": 0.8 - 0.01 * step,
        "grad/radial_cos": 0.01,
        "direction/update_ratio": 1.5,
        "norm/p05": mean - 1.6 * std,
        "norm/p50": mean,
        "norm/p95": mean + 1.6 * std,
        "grad/rotation_ratio": 1.2,
        "grad/norm_mean": 0.05,
        "direction/angle_mean": 0.5,
        "time/step": 0.01,
        "time/samples_per_s": 3200.0,
        "lr": 0.01,
    }


#: The norm variance of the test set at each evaluation: deliberately not the training
#: batch's, so tests can tell which one a page shows.
def held_out_variance(variance: float) -> float:
    return 10 * variance


def snapshot(rng: np.random.Generator, n: int = 40) -> tuple[np.ndarray, np.ndarray]:
    labels = np.arange(n) % NUM_CLASSES
    centres = np.eye(NUM_CLASSES, DIM, dtype=np.float32) * 3
    centres[3] = [-3, -3, -3]
    points = centres[labels] + rng.normal(0, 0.1, (n, DIM)).astype(np.float32)
    return points.astype(np.float32), labels


def record(store: RunStore, run_id: str, variance: float, seed: int) -> None:
    rng = np.random.default_rng(seed)
    store.set_status(run_id, "running", device="cpu")
    with store.tracker(run_id, flush_interval=0) as tracker:
        tracker.track_run_info({"device": "cpu"})
        for step in range(1, STEPS + 1):
            tracker.track_many(scalars(step, variance), step)
            tracker.track_sample_norms([0, 1, 2], [1.0 + step * 0.01, 2.0, 3.0], step)
            if step % 30 == 0:
                tracker.track_eval(
                    {
                        "recall@1": 0.5 + variance,
                        "nmi": 0.4,
                        "f1": 0.3,
                        "map@r": 0.2,
                        "norm/var": held_out_variance(variance),
                    },
                    step,
                )
                tracker.track_snapshot(*snapshot(rng), step)
            tracker.track_progress(step, STEPS)
    store.end_run(run_id, "finished")  # as a writer ends it: final values in the catalogue


def fill_store(store: RunStore) -> Filled:
    sweep_id = "sweep-test"
    sec = store.create_run(config(), "sec run", tags=("sec",), sweep_id=sweep_id)
    record(store, sec, variance=0.1, seed=0)
    plain = store.create_run(config("none", 0.0), "plain run", sweep_id=sweep_id)
    record(store, plain, variance=0.3, seed=1)
    failed = store.create_run(config(), "broken run")
    store.set_status(failed, "running")
    store.set_status(failed, "failed", "RuntimeError: loss became NaN at step 3")
    analysis = store.create_run({}, "analysis of a file", kind="analysis", status="running")
    with store.tracker(analysis, flush_interval=0) as tracker:
        tracker.track_eval({"recall@1": 0.9, "nmi": 0.8}, 0)
        tracker.track_snapshot(*snapshot(np.random.default_rng(5)), 0)
    store.set_status(analysis, "finished")
    return Filled(sec, plain, failed, analysis, sweep_id)


# ----------------------------------------------------------------------------- AppTest

APP_MAIN = Path(__file__).resolve().parents[2] / "app" / "main.py"


def log_scalars(
    store: RunStore,
    run_id: str,
    steps: range,
    *,
    flush_interval: float = 0.0,
    total: int | None = None,
) -> None:
    """``scalars(step, 0.1)`` logged at each of ``steps`` (and the progress of ``total``)."""
    with store.tracker(run_id, flush_interval=flush_interval) as tracker:
        for step in steps:
            tracker.track_many(scalars(step, 0.1), step)
            if total is not None:
                tracker.track_progress(step, total)


def running_run(store: RunStore, name: str, steps: range = range(0), **logging: Any) -> str:
    """A run recorded ``running`` on the CPU that logged ``log_scalars(steps, **logging)``."""
    run_id = store.create_run(config(), name)
    store.set_status(run_id, "running", device="cpu")
    log_scalars(store, run_id, steps, **logging)
    return run_id


def open_page(
    page: str, query_params: dict[str, str] | None = None, timeout: float = 60
) -> AppTest:
    """Run the app, switch to ``page`` ("views/run.py") and run it, then run the
    follow-up a browser would (``ui.follow_up``: a page opened afresh draws its first
    content, then the rest); returns the AppTest showing the whole page."""
    app = first_paint(page, query_params, timeout)
    if FOLLOW_UP_KEY in app.session_state:
        app.run()
    return app


def first_paint(
    page: str, query_params: dict[str, str] | None = None, timeout: float = 60
) -> AppTest:
    """``page`` after its first script run only (what a fresh browser tab gets first).

    Opened as a deep link is, without a run of the default page first: before the
    first run AppTest finds the page by its file name, which is its ``url_path``
    (``app.navigation.PAGES``)."""
    app = AppTest.from_file(str(APP_MAIN), default_timeout=timeout)
    for key, value in (query_params or {}).items():
        app.query_params[key] = value
    app.switch_page(page).run()
    return app


def texts(elements: object) -> list[str]:
    return [str(element.value) for element in elements]


def charts_of(app: AppTest) -> list[dict]:
    """The Vega-Lite specs of the page's charts, with their rows put back under
    ``spec["datasets"]``: Streamlit's charts (rows shipped separately, as Arrow), then
    the Run page's live chart element (``app.panels.live_charts``: spec and rows as
    JSON in its data)."""
    import json

    from streamlit.dataframe_util import convert_arrow_bytes_to_pandas_df

    specs = []
    for element in app.get("vega_lite_chart"):
        spec = json.loads(element.proto.spec)
        spec["datasets"] = {
            named.name: convert_arrow_bytes_to_pandas_df(named.data.data).to_dict("records")
            for named in element.proto.datasets
        }
        specs.append(spec)
    for payload in live_payloads(app):
        for chart in payload["charts"]:
            spec = json.loads(chart["spec"])
            columns = json.loads(chart["rows"])
            spec["datasets"] = {
                "rows": [
                    dict(zip(columns, row, strict=True))
                    for row in zip(*columns.values(), strict=True)
                ]
            }
            specs.append(spec)
    return specs


def live_payloads(app: AppTest) -> list[dict]:
    """The data of the page's live chart elements (``app.panels.live_charts.show``)."""
    import json

    return [
        json.loads(element.proto.json)
        for element in app.get("bidi_component")
        if element.proto.component_name == "spherescope_live_charts"
    ]


def matrices_of(app: AppTest) -> list[dict]:
    """What the page's scatter-matrix elements draw (``app.panels.scatter_matrix``)."""
    import json

    return [
        json.loads(json.loads(element.proto.json)["matrix"])
        for element in app.get("bidi_component")
        if element.proto.component_name == "spherescope_scatter_matrix"
    ]


def live_captions(app: AppTest) -> list[str]:
    """The captions of the page's live chart elements: the points logged and the last
    step, then its notes (the points drawn of those logged, no evaluation yet)."""
    return [text for p in live_payloads(app) for text in [p["caption"], *p["notes"]]]


#: ``app.views.run.SECTION`` (importing a page module runs the page).
RUN_SECTION = "run.section"


def all_run_charts(app: AppTest) -> list[dict]:
    """``charts_of`` every tab of the Run page's charts (only the open tab is drawn):
    opens each in turn, then the first again."""
    from sphere_engine.catalogue import CHART_SECTIONS

    specs: list[dict] = []
    labels = [tab.label for tab in app.tabs if tab.label in CHART_SECTIONS]
    for label in labels:
        app.session_state[RUN_SECTION] = label
        app.run()
        specs.extend(charts_of(app))
    if labels:
        app.session_state[RUN_SECTION] = labels[0]
        app.run()
    return specs


SPARSE_STEPS = 20_000
#: The loss is active on one step in 3 (a miner finding violating triplets in a few
#: batches) and exactly 0 on the others: most buckets' last value is 0, none's max.
SPIKE_EVERY = 3


def spiky_loss(step: int) -> float:
    return 0.5 + step / SPARSE_STEPS if step % SPIKE_EVERY == 0 else 0.0


def sparse_loss_run(store: RunStore) -> str:
    """A finished run of ``SPARSE_STEPS`` steps whose loss terms are ``spiky_loss``."""
    run_id = store.create_run(config(), "sparse loss")
    store.set_status(run_id, "running", device="cpu")
    with store.tracker(run_id, flush_interval=60) as tracker:
        for step in range(1, SPARSE_STEPS + 1):
            values = scalars(step, 0.1)
            values["loss/total"] = values["loss/metric"] = spiky_loss(step)
            tracker.track_many(values, step)
    store.end_run(run_id, "finished")
    return run_id
