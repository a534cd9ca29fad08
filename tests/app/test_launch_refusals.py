"""The launch page shows the launcher's refusal in one line, not a traceback: a run
launched from the dashboard may write checkpoints only under SPHERESCOPE_HOME."""

from __future__ import annotations

from app_fixtures import open_page, texts


def test_a_checkpoint_dir_outside_the_store_is_refused_in_one_line(home, store, tmp_path):
    app = open_page("views/launch.py")
    app.text_input(key="lf0.training.checkpoint_dir").set_value(str(tmp_path / "out")).run()
    app.button(key="launch.go").click().run()

    assert not app.exception
    (message,) = [t for t in texts(app.error) if "checkpoint_dir" in t]
    assert message.startswith("training.checkpoint_dir: ") and "\n" not in message
    assert "not inside SPHERESCOPE_HOME" in message
    assert store.list_runs() == []
    assert not (tmp_path / "out").exists()


def test_more_devices_than_any_live_worker_is_refused_naming_the_largest(home, store, monkeypatch):
    from worker import routing
    from worker.celery_app import app as celery_app
    from worker.devices import advertise_devices
    from worker.redis_server import PrivateRedis

    with PrivateRedis() as redis_server:
        monkeypatch.setenv("REDIS_URL", redis_server.url)
        monkeypatch.setattr(celery_app.conf, "broker_url", redis_server.url)
        client = routing.redis_client(redis_server.url)
        advertise_devices(client, "cpu-a@host", 2, ttl_s=60)  # what a live worker keeps
        advertise_devices(client, "gpu0-b@host", 1, ttl_s=60)
        app = open_page("views/launch.py")
        app.number_input(key="lf0.data.batch_size").set_value(32).run()
        app.number_input(key="lf0.training.devices").set_value(4).run()
        app.button(key="launch.go").click().run()

    assert not app.exception
    (message,) = [t for t in texts(app.error) if "training.devices" in t]
    assert message == (
        "training.devices: 4 is more than any live worker has (the largest, cpu-a@host, has 2)"
    )
    assert store.list_runs() == []
