"""The Geometry page's projector: methods, unit-sphere space, sampling, colours."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from app_fixtures import open_page

from app.charts.projector import MAX_COLOURS, OTHER, colour_classes, projector_scatter
from app.data.projection import projection
from app.projection_methods import project


def blobs(per_class: int = 20, classes: int = 3, dim: int = 8) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    centres = rng.normal(size=(classes, dim)) * 5
    labels = np.repeat(np.arange(classes), per_class)
    return centres[labels] + rng.normal(size=(len(labels), dim)) * 0.3, labels


def test_the_unit_sphere_ignores_the_norms_and_raw_does_not() -> None:
    points, _ = blobs()
    scales = np.random.default_rng(1).uniform(0.5, 20, size=(len(points), 1))
    on_sphere = project(points * scales, "PCA", on_sphere=True)
    assert np.allclose(np.abs(on_sphere), np.abs(project(points, "PCA", on_sphere=True)))
    assert not np.allclose(
        np.abs(project(points * scales, "PCA", on_sphere=False)),
        np.abs(project(points, "PCA", on_sphere=False)),
    )


@pytest.mark.slow
@pytest.mark.parametrize("method", ["UMAP"])  # t-SNE: the page tests draw it
def test_neighbour_methods_keep_classes_apart(method: str) -> None:
    points, labels = blobs()
    xy = project(points, method, on_sphere=False)
    centres = np.stack([xy[labels == c].mean(axis=0) for c in range(3)])
    spread = max(np.linalg.norm(xy[labels == c] - centres[c], axis=1).mean() for c in range(3))
    gaps = [np.linalg.norm(centres[a] - centres[b]) for a in range(3) for b in range(a + 1, 3)]
    assert min(gaps) > 2 * spread


def test_an_unknown_method_or_too_few_points_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="use one of PCA, UMAP, t-SNE"):
        project(np.ones((5, 2)), "LDA", on_sphere=False)
    with pytest.raises(ValueError, match="at least 3 embeddings"):
        project(np.ones((2, 2)), "PCA", on_sphere=False)


def test_twenty_largest_classes_are_coloured_and_the_rest_grey() -> None:
    labels = pd.Series(np.repeat(np.arange(25), np.arange(25, 0, -1)))  # class 0 largest
    coloured = colour_classes(labels)
    assert len(coloured) == MAX_COLOURS and "24" not in coloured and "0" in coloured
    points = pd.DataFrame({"x": 0.0, "y": 0.0, "label": labels, "norm": 1.0, "point": 0})
    spec = projector_scatter(points, "t", found=["3"]).to_dict()
    scale = spec["encoding"]["color"]["scale"]
    assert scale["domain"][-1] == OTHER and len(scale["domain"]) == MAX_COLOURS + 1


def test_a_snapshot_over_the_cap_is_sampled_and_says_so(filled) -> None:
    from db import queries
    from db.store import RunStore

    store = RunStore()
    step = queries.snapshot_steps(store, filled.sec)[-1]
    total = len(queries.snapshot(store, filled.sec, step))
    capped = projection(filled.sec, step, "PCA", True, cap=10)
    assert len(capped.points) == 10 and capped.sampled
    assert capped.note().startswith(f"Sampled 10 of {total:,} embeddings")
    assert not projection(filled.sec, step, "PCA", True).sampled


def test_the_geometry_page_switches_projection_methods(filled) -> None:
    app = open_page("views/geometry.py", {"run_id": filled.sec})
    assert not app.exception and not app.error
    method = app.radio(key="geometry.projector0.method")
    assert method.value == "PCA"
    method.set_value("t-SNE").run()
    assert not app.exception and not app.error
    titles = [str(el.proto.spec) for el in app.get("vega_lite_chart")]
    assert any("t-SNE of the raw embeddings" in t for t in titles)


def test_sphere_points_lie_on_the_sphere_in_their_class_colours() -> None:
    from app.charts.sphere_view import RADIUS, sphere_points

    coordinates = np.array([[3.0, 0, 0], [0, 0.1, 0], [0, 0, -7.0]])
    points = sphere_points(coordinates, pd.Series([5, 6, 5]))
    radii = np.linalg.norm(np.array(points["position"].tolist()), axis=1)
    assert np.allclose(radii, RADIUS)
    assert points["color"][0] == points["color"][2] != points["color"][1]
    with pytest.raises(ValueError, match="needs 3-d embeddings; these are 2-d"):
        sphere_points(np.ones((3, 2)), pd.Series([0, 1, 2]))


def test_three_d_embeddings_offer_the_sphere_view(filled) -> None:
    app = open_page("views/geometry.py", {"run_id": filled.sec})  # d = 3
    app.toggle(key="geometry.projector0.sphere3d").set_value(True).run()
    assert not app.exception and not app.error
    (deck,) = app.get("deck_gl_json_chart")
    assert "OrbitView" in deck.proto.json and "PointCloudLayer" in deck.proto.json


def test_class_ids_get_the_names_the_run_recorded() -> None:
    from app.panels.projector import named_classes

    points = pd.DataFrame({"x": 0.0, "y": 0.0, "label": [5, 7, 9], "norm": 1.0, "point": 0})
    info = {"class_names_test": ["finch", "heron", "wren"], "class_ids_test": [5, 7, 9]}
    assert list(named_classes(points, info)["label"]) == ["finch", "heron", "wren"]
    assert list(named_classes(points, {})["label"]) == [5, 7, 9]  # digits: ids are names


def test_the_hover_shows_each_points_image(store) -> None:
    from app_fixtures import charts_of

    from db.lifecycle import RunLifecycle
    from db.thumbnails import write_snapshot_samples, write_thumbnails

    embeddings, labels = blobs(per_class=8)
    run_id = store.create_run({}, "pictures", kind="train")
    with RunLifecycle(store, run_id, heartbeat_s=60) as run:
        run.tracker.track_snapshot(embeddings, labels, step=10)
    # point i is sample 100 + i; samples 100..109 have images, the rest none
    write_snapshot_samples(store, run_id, 10, np.arange(100, 124))
    write_thumbnails(store, run_id, np.arange(100, 110), np.full((10, 8, 8), 9, np.uint8))
    app = open_page("views/geometry.py", {"run_id": run_id})
    assert not app.exception and not app.error
    spec = next(s for s in charts_of(app) if "PCA of the raw" in str(s.get("title")))
    assert {"field": "image", "title": "image", "type": "nominal"} in spec["encoding"]["tooltip"]
    rows = next(iter(spec["datasets"].values()))
    from app.data.projection import NO_IMAGE

    with_image = sorted(r["point"] for r in rows if r["image"] != NO_IMAGE)
    assert with_image == list(range(10))  # the others: a transparent pixel, no broken image
    assert all(r["image"].startswith("data:image/png;base64,") for r in rows)
    # drawn at least 64 px a side, each pixel a crisp block (nearest neighbour)
    import base64
    import io

    from PIL import Image

    shown = next(r["image"] for r in rows if r["image"] != NO_IMAGE)
    picture = Image.open(io.BytesIO(base64.b64decode(shown.split(",", 1)[1])))
    assert min(picture.size) >= 64
    assert set(np.asarray(picture).ravel().tolist()) == {9}
