"""A run recorded by the spherescope SDK in the dashboard: Compare next to a launched run,
Geometry from its evaluation snapshot, the Run page's downloads."""

from __future__ import annotations

import io
import zipfile

import pytest
import torch
from app_fixtures import Filled, charts_of, live_payloads, open_page, texts

import spherescope
from db.run_export import export_zip
from db.store import RunStore


@pytest.fixture
def sdk_run(store: RunStore, filled_fresh: Filled) -> str:
    """A real SDK run (plain loop, gradient hook, evaluation with snapshot) in a store
    that also holds synthetic launched runs."""
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(12, 16), torch.nn.ReLU(), torch.nn.Linear(16, 8))
    inputs, labels = torch.randn(60, 12), torch.arange(60) % 5
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with spherescope.init(name="sdk run", config={"lr": 0.1}, home=str(store.home)) as run:
        for step in range(1, 7):
            embeddings = model(inputs)
            run.log_embeddings(embeddings, labels, step=step)
            loss = -torch.nn.functional.normalize(embeddings, dim=1)[:, 0].mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            run.log({"loss/total": loss.item()}, step=step)
        with torch.no_grad():
            run.evaluate(model(inputs), labels, step=6)
    return run.id


def test_compare_shows_an_sdk_run_next_to_a_launched_run(
    sdk_run: str, filled_fresh: Filled, store: RunStore
):
    app = open_page("views/compare.py", {"runs": f"{sdk_run},{filled_fresh.sec}"})
    assert not app.exception and not app.error
    assert app.multiselect(key="compare.runs").value == [sdk_run, filled_fresh.sec]
    (payload,) = live_payloads(app)  # the metric charts' element (zoom linked)
    spec = charts_of(app)[-len(payload["charts"])]  # the first metric chart
    # the rows name each run by its label (the run's name), the one column for it drawn
    labels = {row["run"] for rows in spec["datasets"].values() for row in rows}
    names = [store.get_run(run_id).name for run_id in (sdk_run, filled_fresh.sec)]
    assert len(labels) == 2
    assert all(sum(name in label for label in labels) == 1 for name in names), (labels, names)
    table = app.dataframe[0].value
    assert len(table) == 2 and table["R@1"].notna().all()


def test_geometry_draws_the_sdk_runs_snapshot(sdk_run: str):
    app = open_page("views/geometry.py", {"run_id": sdk_run})
    assert not app.exception and not app.error
    titles = [spec.get("title", {}).get("text") for spec in charts_of(app)]
    assert titles[:2] == ["Norm histogram", "PCA projection"]
    assert any("Step 6: 60 test embeddings, d = 8, 5 classes" in c for c in texts(app.caption))


def test_run_page_offers_the_run_as_a_download(sdk_run: str, store: RunStore):
    app = open_page("views/run.py", {"run_id": sdk_run})
    assert not app.exception and not app.error
    (button,) = app.get("download_button")
    assert button.proto.label == "Download csv (zip)"
    app.radio(key="run.download_format").set_value("tensorboard").run()
    assert not app.exception
    (button,) = app.get("download_button")
    assert button.proto.label == "Download tensorboard (zip)"
    names = zipfile.ZipFile(io.BytesIO(export_zip(store, sdk_run, "tensorboard"))).namelist()
    assert names and all(name.startswith(f"{sdk_run}/events.out.tfevents.") for name in names)


def test_the_run_page_builds_a_download_only_when_it_is_clicked(sdk_run: str, monkeypatch):
    """The archive of a live run grows with it: built at every run of the page it cost
    seconds of CPU per page load and widget change (and its training the same)."""
    from app.panels import downloads
    from db import run_export

    built = []
    export = run_export.export_run_files
    monkeypatch.setattr(
        run_export, "export_run_files", lambda *args: built.append(args[1:]) or export(*args)
    )
    app = open_page("views/run.py", {"run_id": sdk_run})
    assert not app.exception and not app.error
    app.radio(key="run.download_format").set_value("parquet").run()
    (button,) = app.get("download_button")
    assert button.proto.label == "Download parquet (zip)"
    assert built == []  # nothing exported by showing the page or changing the format
    names = zipfile.ZipFile(io.BytesIO(downloads._archive(sdk_run, "parquet"))).namelist()
    assert built and names  # a click builds it


def test_run_page_shows_what_is_known_of_an_sdk_run(sdk_run: str):
    """No "step 6 of ?" and no device "–": the step alone, the tensors' device, the host."""
    app = open_page("views/run.py", {"run_id": sdk_run})
    assert not app.exception and not app.error
    tiles = app.markdown[0].value
    assert ">6<" in tiles and "of ?" not in tiles
    caption = next(c for c in texts(app.caption) if c.startswith("Elapsed"))
    assert "device cpu" in caption and "host –" not in caption
