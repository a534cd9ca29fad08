"""The Geometry page shows a face analysis's two conventions side by side where they
differ (``app/panels/face_conventions.py``), and nothing more where they agree."""

from __future__ import annotations

from app_fixtures import open_page

from app.panels.face_conventions import side_by_side


def _face_analysis(store, convention: str, metrics: dict[str, float]) -> str:
    config = {"analysis": {"protocol": "face", "convention": convention, "keep_norms": False}}
    run_id = store.create_run(config, "ijb", kind="analysis", status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        tracker.track_eval(metrics, 0)
    store.set_status(run_id, "finished")
    return run_id


def test_differing_conventions_are_shown_side_by_side(store):
    run_id = _face_analysis(
        store,
        "insightface",
        {
            "ijb/tar@far=1e-2": 0.75,
            "ijb/bounded/tar@far=1e-2": 0.5,
            "ijb/tpir@fpir=1e-1": 0.25,
            "ijb/bounded/tpir@fpir=1e-1": 0.25,  # the same: no row
            "ijb/rank1": 0.9,
        },
    )
    app = open_page("views/geometry.py", {"run_id": run_id})
    assert not app.exception and not app.error
    assert "**Face conventions side by side**" in [m.value for m in app.markdown]
    table = next(d.value for d in app.dataframe if "insightface" in d.value.columns)
    assert table.to_dict("records") == [
        {"metric": "ijb/tar@far=1e-2", "insightface": 0.75, "bounded": 0.5}
    ]


def test_agreeing_conventions_add_nothing(store):
    run_id = _face_analysis(
        store, "bounded", {"ijb/tar@far=1e-2": 0.5, "ijb/insightface/tar@far=1e-2": 0.5}
    )
    app = open_page("views/geometry.py", {"run_id": run_id})
    assert not app.exception and not app.error
    assert "**Face conventions side by side**" not in [m.value for m in app.markdown]


def test_side_by_side_pairs_keys_by_name_only():
    metrics = {
        "verification/accuracy": 0.9,
        "verification/insightface/accuracy": 0.925,
        "verification/tar@far=1e-3": float("nan"),
        "verification/insightface/tar@far=1e-3": float("nan"),
        "retrieval/other/thing": 1.0,  # no retrieval/thing: not a convention pair
    }
    assert side_by_side(metrics, "bounded").to_dict("records") == [
        {"metric": "verification/accuracy", "bounded": 0.9, "insightface": 0.925}
    ]
