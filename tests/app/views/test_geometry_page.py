"""app/views/geometry.py under AppTest: snapshot charts, vertices, side by side, analyses."""

from __future__ import annotations

from app_fixtures import charts_of, first_paint, matrices_of, open_page, texts


def _title(spec: dict) -> str | None:
    text = spec.get("title", {}).get("text")
    return " ".join(text) if isinstance(text, list) else text  # long titles wrap


def _titles(app) -> list[str]:
    return [_title(spec) for spec in charts_of(app)]


def test_empty_store_explains_and_links_to_launch(home):
    app = open_page("views/geometry.py")
    assert not app.exception
    assert any("No runs yet" in t for t in texts(app.info))


def test_a_fresh_page_draws_the_histogram_and_pca_then_the_matrix(filled):
    """Opened afresh: the norm histogram and the PCA first; the scatter matrix (the
    slowest chart to build and to embed), the centroid angles and the analyses follow."""
    app = first_paint("views/geometry.py", {"run_id": filled.sec})
    assert not app.exception and not app.error
    assert _titles(app) == ["Norm histogram", "PCA projection"] and not matrices_of(app)
    app.run()
    assert len(_titles(app)) == 4 and len(matrices_of(app)) == 1  # + the projector
    assert "Recorded analyses" in [h.value for h in app.subheader]


def test_snapshot_charts_with_fixed_head_vertices(filled):
    app = open_page("views/geometry.py", {"run_id": filled.sec})
    assert not app.exception and not app.error
    titles = _titles(app)
    assert titles == [
        "Norm histogram",
        "PCA projection",
        "PCA of the raw embeddings at step 60",
        "Angles between class centroids (degrees)",
    ]
    (matrix,) = matrices_of(app)
    assert matrix["title"] == "All 3 coordinates · fixed simplex vertices (×, scaled to median ‖f‖)"
    assert matrix["coords"] == ["c0", "c1", "c2"]
    assert [len(v) for v in matrix["vertices"].values()] == [4, 4, 4]
    assert len(matrix["labels"]) == 40
    assert any("Step 60: 40 test embeddings, d = 3, 4 classes" in c for c in texts(app.caption))


def test_two_runs_side_by_side(filled):
    app = open_page("views/geometry.py", {"run_id": filled.sec})
    app.toggle(key="geometry.pair").set_value(True).run()
    app.selectbox(key="geometry.run1").set_value(filled.plain).run()
    assert not app.exception and not app.error
    assert len(charts_of(app)) == 8 and len(matrices_of(app)) == 2  # 4 per side with the projector


def test_the_same_run_on_both_sides(filled):
    """Side by side, both selectboxes may name one run: two matrices, no key clash."""
    app = open_page("views/geometry.py", {"run_id": filled.sec})
    app.toggle(key="geometry.pair").set_value(True).run()
    app.selectbox(key="geometry.run1").set_value(filled.sec).run()
    assert not app.exception and not app.error
    left, right = matrices_of(app)
    assert left == right


def test_analysis_run_shows_its_metrics(filled):
    app = open_page("views/geometry.py", {"run_id": filled.analysis})
    assert not app.exception and not app.error
    metrics = app.dataframe[0].value
    assert dict(zip(metrics["metric"], metrics["value"], strict=True)) == {
        "recall@1": 0.9,
        "nmi": 0.8,
    }
    recorded = app.dataframe[-1].value
    assert recorded["run_id"].tolist() == [filled.analysis]
    assert len(charts_of(app)) == 4 and len(matrices_of(app)) == 1


def test_run_without_snapshot_explains(filled):
    app = open_page("views/geometry.py", {"run_id": filled.failed})
    assert not app.exception
    assert any("no embedding snapshot yet" in t for t in texts(app.info))


def test_side_by_side_shares_axes_colours_and_one_step_slider(filled):
    """Side by side, each run had its own axes and colour scales."""
    app = open_page("views/geometry.py", {"run_id": filled.sec})
    app.toggle(key="geometry.pair").set_value(True).run()
    app.selectbox(key="geometry.run1").set_value(filled.plain).run()
    assert not app.exception and not app.error
    specs = charts_of(app)
    hists = [s for s in specs if _title(s) == "Norm histogram"]
    pcas = [s for s in specs if _title(s) == "PCA projection"]
    matrices = matrices_of(app)
    assert len(hists) == len(pcas) == len(matrices) == 2
    assert hists[0]["encoding"]["x"]["scale"] == hists[1]["encoding"]["x"]["scale"]
    assert pcas[0]["encoding"]["x"]["scale"] == pcas[1]["encoding"]["x"]["scale"]
    assert pcas[0]["encoding"]["color"]["scale"] == pcas[1]["encoding"]["color"]["scale"]
    assert matrices[0]["domains"] == matrices[1]["domains"]
    assert matrices[0]["histograms"] != matrices[1]["histograms"]  # two runs, one binning
    assert matrices[0]["classes"] == matrices[1]["classes"]
    assert matrices[0]["colors"] == matrices[1]["colors"]
    # one slider drives both sides (both runs evaluated at steps 30 and 60)
    slider = app.select_slider(key="geometry.step.both")
    slider.set_value(30).run()
    assert sum("Step 30:" in c for c in texts(app.caption)) == 2


def test_principal_components_in_the_scatter_matrix(filled):
    app = open_page("views/geometry.py", {"run_id": filled.sec})
    app.radio(key="geometry.basis").set_value("pcs").run()
    assert not app.exception and not app.error
    (matrix,) = matrices_of(app)
    assert matrix["coords"] == ["pc1", "pc2", "pc3"]
    assert "principal components" in matrix["title"]
