"""The Launch page's Study mode under AppTest: a study file is checked like the CLI
checks it (one line naming the field; nothing created), and a good one is created and
handed to a coordinator process."""

from __future__ import annotations

from app_fixtures import open_page, texts

from worker.study import control
from worker.study.storage import list_study_ids, load_study_spec

GOOD = """name = "form"
folds = 2
trials = 2
reproductions = 2
[base.data]
name = "synthetic"
batch_size = 4
samples_per_class = 2
options = { num_classes = 16, dim = 8 }
[base.model]
name = "mlp"
embedding_dim = 8
[arms.triplet]
set = { "objective.name" = "triplet" }
space = { "objective.options.margin" = { type = "float", low = 0.05, high = 0.5 } }
"""


def _study_mode(text: str):
    app = open_page("views/launch.py", timeout=180)
    app.toggle(key="launch.study").set_value(True).run()
    app.selectbox(key="study.choice").set_value("(a study file)").run()
    app.text_area(key="study.text").set_value(text).run()
    return app


def test_a_bad_study_file_is_one_line_and_creates_nothing(home) -> None:
    app = _study_mode(GOOD.replace("trials = 2", "trials = 0"))
    assert texts(app.error) == ["trials: 0: the budget must be at least 1 trial per arm"]
    assert app.button(key="study.go").disabled
    assert list_study_ids(home) == []


def test_a_good_study_is_created_and_coordinated(home, monkeypatch) -> None:
    started = []
    monkeypatch.setenv("REDIS_URL", "redis://127.0.0.1:1/0")  # configured; never reached
    monkeypatch.setattr(control, "start_detached", lambda h, sid: started.append(sid) or 1)
    app = _study_mode(GOOD)
    assert not app.error
    app.button(key="study.go").click().run()
    (study_id,) = list_study_ids(home)
    assert started == [study_id]
    assert load_study_spec(home, study_id).arms[0].name == "triplet"
    assert any(study_id in text for text in texts(app.success))
