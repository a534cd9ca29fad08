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
