"""A long run whose loss is 0 on most steps and spikes on a few: the Run page's and
Compare's loss charts carry each downsampled bucket's min–max band, not only its last
value (which drew the loss as a flat 0 line)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from app_fixtures import SPARSE_STEPS as STEPS
from app_fixtures import charts_of, open_page, spiky_loss


def _rows(spec: dict) -> pd.DataFrame:
    (rows,) = spec["datasets"].values()
    return pd.DataFrame.from_records(rows)


def _check_band(spec: dict, rows: pd.DataFrame) -> None:
    """The chart draws an area from each bucket's min to its max behind the line of
    its last values, and the maxima are the spikes the last values hide."""
    kinds = [p["mark"]["type"] if isinstance(p["mark"], dict) else p["mark"] for p in spec["layer"]]
    assert kinds == ["area", "line"], kinds
    area = spec["layer"][0]["encoding"]
    assert (area["y"]["field"], area["y2"]["field"]) == ("min", "max")
    assert 50 <= len(rows) < STEPS  # downsampled
    assert (rows["value"] == 0).mean() > 0.5  # the last values: mostly a flat 0 line
    spikes = np.array([spiky_loss(s) for s in range(1, STEPS + 1)])
    assert (rows["max"].iloc[:-1] > 0).all()  # a spike in every bucket (the last: 1 step)
    assert rows["max"].max() == spikes.max()
    assert (rows["min"] == 0).all()
    assert set(rows["max"]) <= set(spikes)  # raw values, not averaged ones


def test_run_page_loss_chart_draws_each_buckets_min_max_band(sparse_loss):
    run_id = sparse_loss
    app = open_page("views/run.py", {"run_id": run_id})
    assert not app.exception
    loss = next(s for s in charts_of(app) if "loss/total" in set(_rows(s).get("name", [])))
    rows = _rows(loss)
    _check_band(loss, rows[rows["name"] == "loss/total"])


def test_compare_loss_chart_draws_each_buckets_min_max_band(sparse_loss):
    run_id = sparse_loss
    app = open_page("views/compare.py", {"runs": run_id, "metrics": "loss/total"})
    assert not app.exception
    loss = next(s for s in charts_of(app) if "layer" in s and len(s.get("datasets") or {}) == 1)
    _check_band(loss, _rows(loss))
