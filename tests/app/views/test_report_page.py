"""app/views/report.py under AppTest: tables and verdicts from tagged runs in the store."""

from __future__ import annotations

from app_fixtures import charts_of, open_page, texts

from db.store import RunStore
from sphere_engine.experiments import EXPERIMENT_TAG, VARIANT_TAG, get_experiment

# (variant, seed) -> (classifier accuracy, k-means NMI, training norm variance)
RUNS = {
    ("softmax", 0): (0.90, 0.60, 4.0),
    ("softmax", 1): (0.92, 0.62, 5.0),
    ("softmax + isotropic", 0): (0.91, 0.70, 1.0),
    ("softmax + isotropic", 1): (0.93, 0.72, 2.0),
}


def _fill(store: RunStore) -> None:
    experiment = get_experiment("isotropic")
    for (variant, seed), (accuracy, nmi, variance) in RUNS.items():
        config = experiment.config(experiment.variant(variant), seed, steps=8)
        tags = [EXPERIMENT_TAG + "isotropic", VARIANT_TAG + variant]
        run_id = store.create_run(config, f"{variant} {seed}", tags=tags, status="running")
        with store.tracker(run_id, flush_interval=0) as tracker:
            for step in range(1, 9):  # the last quarter (steps 7, 8) holds `variance`
                tracker.track_many({"norm/var": variance if step > 6 else 100.0}, step)
            tracker.track_eval({"classifier_accuracy": accuracy, "nmi": nmi}, 8)
        store.set_status(run_id, "finished")


def test_empty_store_says_how_to_run_an_experiment(home):
    app = open_page("views/report.py")
    assert not app.exception
    assert any("spherescope reproduce sec-ablation" in t for t in texts(app.info))


def test_table_claims_and_chart_of_an_experiment(store):
    _fill(store)
    app = open_page("views/report.py")
    app.selectbox(key="report.experiment").set_value("isotropic").run()
    assert not app.exception and not app.error
    table = app.dataframe[0].value.set_index("variant")
    (used,) = [t for t in texts(app.markdown) if "| run_id |" in t]  # the runs used, listed
    assert used.count("| tagged |") == table["n"].sum()
    assert table.loc["softmax", "n"] == 2
    assert table.loc["softmax", "classifier acc"] == "91.0 ± 1.41"
    assert table.loc["softmax + isotropic", "train norm var"] == "1.50 ± 0.707"
    claims = [t for t in texts(app.markdown) if "**agrees**" in t or "**disagrees**" in t]
    assert any("agrees**: The isotropic regulariser improves k-means NMI" in t for t in claims)
    # each claim's evidence: n, mean ± std, effect size and test
    evidence = [c for c in texts(app.caption) if "(n = 2)" in c]
    assert evidence and all("±" in c for c in evidence)
    (spec,) = charts_of(app)  # the chosen metric per variant, first: classifier acc
    rows = next(iter(spec["datasets"].values()))
    means = {row["variant"]: row["mean"] for row in rows}
    assert means["softmax"] == 91.0 and means["softmax + isotropic"] == 92.0


def test_a_study_preset_shows_its_studys_result_table(store):
    from sphere_engine.experiments.studies import study_preset
    from worker.study.runs import reproduction_tags
    from worker.study.spec import parse_spec
    from worker.study.storage import create_study_folder

    table = study_preset("study-cpu")
    study_id = create_study_folder(store.home, parse_spec(table))
    values = {"triplet": (0.20, 0.22, 0.21), "ms": (0.30, 0.31, 0.29)}
    for arm, per_repro in values.items():
        for repro, value in enumerate(per_repro):
            for fold in (0, 1):
                tags = reproduction_tags(study_id, arm, repro, fold)
                run_id = store.create_run({}, f"{arm} {repro} {fold}", tags=tags, status="running")
                with store.tracker(run_id, flush_interval=0) as tracker:
                    tracker.track_eval({"test/map@r": value, "test/precision@1": 0.5}, 10)
                store.set_status(run_id, "finished")
    app = open_page("views/report.py")
    app.selectbox(key="report.experiment").set_value("study-cpu").run()
    assert not app.exception
    text = "\n".join(texts(app.markdown))
    assert "| ms | 3 |" in text and "| triplet | 3 |" in text
    assert "30.00 ±" in text and "21.00 ±" in text  # MAP@R means over the reproductions
