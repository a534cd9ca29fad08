"""A fold run (``data.folds``) evaluates during training on the validation classes of its
fold, never on the test set: the Run page names its evaluations so, and a run without
folds keeps "test set"."""

from __future__ import annotations

from app_fixtures import all_run_charts, config, open_page, scalars

from app.data.evaluation_set import evaluation_set
from db.store import RunStore


def _run(store: RunStore, name: str, *, folds: int = 0, fold: int = 0) -> str:
    run_config = config()
    run_config["data"].update(folds=folds, fold=fold)
    run_id = store.create_run(run_config, name, status="running")
    with store.tracker(run_id, flush_interval=0) as tracker:
        if folds:  # as the engine records it (sphere_engine.training.setup.recorded_classes)
            tracker.track_run_info({"evaluated_on": "validation"})
        for step in range(1, 31):
            tracker.track_many(scalars(step, 0.1), step)
        tracker.track_eval({"recall@1": 0.5, "norm/var": 0.01}, 30)
    store.end_run(run_id, "finished")
    return run_id


def _titles(app) -> list[str]:
    titles = []
    for spec in all_run_charts(app):
        title = (spec.get("title") or {}).get("text", "")
        titles.append(" ".join(title) if isinstance(title, list) else str(title))
    return titles


def test_a_fold_runs_evaluations_are_named_by_its_validation_classes(store) -> None:
    run_id = _run(store, "fold-2", folds=4, fold=2)
    assert evaluation_set(store.get_run(run_id)) == "validation classes of fold 2"
    app = open_page("views/run.py", {"run_id": run_id})
    assert not app.exception
    picker = app.multiselect(key="run.evals")
    assert picker.label.startswith("Evaluation metrics on the validation classes of fold 2")
    assert "norm variance (validation classes of fold 2)" in picker.options
    assert not any("test set" in option for option in picker.options)
    assert "Evaluation on the validation classes of fold 2" in _titles(app)


def test_a_run_without_folds_keeps_the_test_set(store) -> None:
    run_id = _run(store, "plain")
    app = open_page("views/run.py", {"run_id": run_id})
    assert not app.exception
    picker = app.multiselect(key="run.evals")
    assert picker.label.startswith("Evaluation metrics on the test set")
    assert "norm variance (test set)" in picker.options
    assert "Evaluation on the test split" in _titles(app)
