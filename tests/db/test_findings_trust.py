"""db.findings: per-firing severities stored with a run, re-evaluated once the rules
change, and the trust a run's critical findings take away."""

from __future__ import annotations

from db import findings as run_findings
from db.lifecycle import RunLifecycle
from db.store import RunStore
from sphere_engine.findings import RULES_VERSION, Severity


def record(store: RunStore, name: str, values) -> str:
    """A run recorded through the real lifecycle (which stores its findings at its end)."""
    run_id = store.create_run({"model": {"embedding_dim": 8}}, name, kind="train")
    with RunLifecycle(store, run_id, heartbeat_s=60) as run:
        for step in range(1, 101):
            run.tracker.track_many(values(step), step)
        for step in (25, 50, 75, 100):
            run.tracker.track_eval({"recall@1": 0.6 + step / 1000}, step)
    return run_id


def dry_miner(step: int) -> dict:
    # learns for 40 steps, then the miner finds nothing: R@1 still rising
    return {"loss/metric": 0.3 if step <= 40 else 0.0, "norm/mean": 1.0}


def exploding(step: int) -> dict:
    return {"loss/metric": 0.1, "norm/mean": 0.3 * 10 ** (step * 0.2)}


def test_the_stored_severity_is_the_firings_and_trust_follows_critical_findings(store) -> None:
    dry, diverged = record(store, "dry", dry_miner), record(store, "diverged", exploding)
    dry_info, diverged_info = (store.get_run(r).run_info for r in (dry, diverged))
    (dead,) = run_findings.stored_findings(dry_info)
    assert dead.name == "dead_loss" and dead.severity is Severity.INFO
    assert dry_info[run_findings.VERSION_KEY] == RULES_VERSION
    assert not run_findings.run_untrusted(dry_info)
    assert run_findings.run_untrusted(diverged_info)
    assert run_findings.untrusted_reasons(run_findings.stored_findings(diverged_info)) == [
        "Training diverged"
    ]
    assert not run_findings.run_untrusted(None)


def test_findings_stored_under_older_rules_are_evaluated_and_stored_again(store) -> None:
    run_id = record(store, "dry", dry_miner)
    # what the rules of the previous version stored: the same dead loss, as critical
    old = {**run_findings.stored_findings(store.get_run(run_id).run_info)[0].to_dict()}
    old["severity"] = "critical"
    store.update_run_info(run_id, {run_findings.INFO_KEY: [old], run_findings.VERSION_KEY: None})
    assert run_findings.run_untrusted(store.get_run(run_id).run_info)  # as stored
    (dead,) = run_findings.run_findings(store, run_id)
    assert dead.severity is Severity.INFO
    info = store.get_run(run_id).run_info
    assert run_findings.stored_current(info) and not run_findings.run_untrusted(info)


def test_a_live_runs_findings_are_as_of_its_last_logged_step(store) -> None:
    run_id = store.create_run({}, "live", kind="train")
    store.set_status(run_id, "running", device="cpu")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in range(1, 61):
            tracker.track_many({"loss/metric": 0.1, "norm/mean": 0.3 * 10 ** (step * 0.2)}, step)
    (diverged,) = run_findings.run_findings(store, run_id)
    assert diverged.as_of == 60
    assert run_findings.findings_frame([diverged])["as_of"].tolist() == [60]


def test_a_long_runs_sparse_loss_is_not_dead_once_downsampled(store) -> None:
    """12,000 logged steps are read as 2,000 buckets that keep their last value: a loss
    active one step in four often ends its bucket at 0, but the bucket's steps were not
    all dead (the findings read each bucket's largest value)."""
    run_id = store.create_run({"model": {"embedding_dim": 8}}, "sparse", kind="train")
    with RunLifecycle(store, run_id, heartbeat_s=60) as run:
        for start in range(1, 12_001, 500):
            for step in range(start, start + 500):
                active = step % 4 == 1
                run.tracker.track_many(
                    {"loss/metric": 0.2 if active else 0.0,
                     "mining/active_fraction": 0.3 if active else 0.0},
                    step,
                )  # fmt: skip
        for step in (4_000, 8_000, 12_000):
            run.tracker.track_eval({"recall@1": 0.6 + step / 100_000}, step)
    series = run_findings.run_series(store, run_id)
    assert (series.series("loss/metric") == 0.0).mean() > 0.5  # the buckets' last values
    names = [d.name for d in run_findings.stored_findings(store.get_run(run_id).run_info)]
    assert "dead_loss" not in names
