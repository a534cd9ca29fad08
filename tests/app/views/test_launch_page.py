"""app/views/launch.py under AppTest: the form validates, launches, presets and sweeps."""

from __future__ import annotations

import pytest
from app_fixtures import open_page, texts

import worker
from app.presets import PRESETS
from sphere_engine.catalogue.facts import OPTIMIZERS
from sphere_engine.config import RunConfig


@pytest.fixture
def launched(monkeypatch, store):
    """worker.launch_many / launch_sweep replaced by fakes that only record the runs."""
    calls: dict[str, list] = {"launch": [], "sweep": []}

    def fake_launch_many(
        configs, names=(), tags=(), sweep_id=None, *, run_tags=(), store=None, project=None
    ):
        names = list(names) or [None] * len(configs)
        own = list(run_tags) or [()] * len(configs)
        ids = []
        for config, name, extra in zip(configs, names, own, strict=True):
            all_tags = (*tags, *extra)
            calls["launch"].append(
                {"config": config, "name": name, "tags": all_tags, "sweep_id": sweep_id,
                 "project": project}
            )  # fmt: skip
            ids.append(
                store.create_run(config, name, tags=all_tags, sweep_id=sweep_id, project=project)
            )
        return ids

    def fake_sweep(base, grid, seeds, *, name=None, tags=(), store=None, project=None):
        calls["sweep"].append({"base": base, "grid": grid, "seeds": seeds})
        count = len(seeds)
        for values in grid.values():
            count *= len(values)
        return "sweep-fake", [
            store.create_run(base, f"s{i}", sweep_id="sweep-fake") for i in range(count)
        ]

    monkeypatch.setattr(worker, "launch_many", fake_launch_many)
    monkeypatch.setattr(worker, "launch_sweep", fake_sweep)
    return calls


def _form_key(app, dotted: str) -> str:
    generation = app.session_state.get("launch.generation", 0)
    return f"lf{generation}.{dotted}"


def test_form_has_a_field_with_help_for_every_setting(home):
    app = open_page("views/launch.py")
    assert not app.exception
    lr = app.number_input(key="lf0.optimizer.lr")
    assert lr.value == pytest.approx(RunConfig().optimizer.lr)
    assert "Learning rate" in lr.help
    steps = app.number_input(key="lf0.training.steps")
    assert "min 1" in steps.help
    assert app.selectbox(key="lf0.optimizer.name").options == list(OPTIMIZERS)
    assert "digits" in app.selectbox(key="lf0.data.name").options
    # options of the chosen loss come from its registry entry, with help and default
    margin = app.number_input(key="lf0.objective.options.loss.triplet.margin")
    assert margin.value == pytest.approx(0.1)
    assert "default 0.1" in margin.help


def test_bad_value_shows_the_config_message_and_keeps_values(home, launched):
    app = open_page("views/launch.py")
    app.number_input(key="lf0.data.samples_per_class").set_value(4)
    app.number_input(key="lf0.data.batch_size").set_value(30).run()
    errors = texts(app.error)
    assert any(e.startswith("data.batch_size: 30 is not a multiple") for e in errors)
    assert any(e.startswith("Invalid config") for e in errors)
    assert app.button(key="launch.go").disabled
    assert app.number_input(key="lf0.data.batch_size").value == 30  # the form keeps it
    app.number_input(key="lf0.data.batch_size").set_value(20).run()
    assert not app.error
    assert not app.button(key="launch.go").disabled


def test_out_of_range_value_is_reported_by_the_config(home):
    app = open_page("views/launch.py")
    app.number_input(key="lf0.training.steps").set_value(0).run()
    assert any("training.steps: 0 is below the minimum 1" in e for e in texts(app.error))


def test_launch_sends_the_form_config_and_links_to_the_run(home, launched):
    app = open_page("views/launch.py")
    app.number_input(key="lf0.training.steps").set_value(42)
    app.text_input(key="launch.name").set_value("my run")
    app.text_input(key="launch.tags").set_value("a, b")
    assert app.text_input(key="launch.project").value == "default"
    app.text_input(key="launch.project").set_value("lab-a")
    app.button(key="launch.go").click().run()
    assert not app.exception and not app.error
    (call,) = launched["launch"]
    assert call["config"]["training"]["steps"] == 42
    assert (call["name"], call["tags"], call["project"]) == ("my run", ("a", "b"), "lab-a")
    assert any("Launched 1 run" in s for s in texts(app.success))
    run_links = [link.proto for link in app.get("page_link") if link.proto.page.endswith("run")]
    assert len(run_links) == 1
    assert run_links[0].label.startswith("Open run ")
    assert run_links[0].query_string == f"run_id={run_links[0].label.split()[-1]}"


def test_preset_launches_all_its_runs_as_one_sweep(home, launched):
    app = open_page("views/launch.py")
    app.selectbox(key="launch.preset").set_value("sec-ablation").run()
    app.button(key="launch.preset.go").click().run()
    calls = launched["launch"]
    preset = PRESETS["sec-ablation"]
    assert len(calls) == len(preset.configs) == 6
    assert len({c["sweep_id"] for c in calls}) == 1 and calls[0]["sweep_id"]
    assert [c["config"]["regularizer"]["name"] for c in calls] == [
        "none",
        "sec",
        "l2",
        "l2",
        "l2",
        "l2",
    ]
    assert all({"sec-ablation", "repro:sec-ablation"} <= set(c["tags"]) for c in calls)
    assert calls[1]["tags"][-1] == "variant:SEC η=0.5"  # as the report looks it up


def test_preset_run_loads_into_the_form(home):
    app = open_page("views/launch.py")
    app.selectbox(key="launch.preset").set_value("reponet").run()
    app.selectbox(key="launch.preset.edit").set_value(3).run()  # orthoplex, m=φ
    app.button(key="launch.preset.load").click().run()
    assert app.selectbox(key=_form_key(app, "model.name")).value == "lenetpp"
    assert app.selectbox(key=_form_key(app, "objective.name.head")).value == "orthoplex"
    margin = app.text_input(key=_form_key(app, "objective.options.head.orthoplex.margin"))
    assert margin.value == "auto"


def test_sweep_mode_expands_grid_times_seeds(home, launched):
    app = open_page("views/launch.py")
    app.toggle(key="launch.sweep").set_value(True).run()
    app.selectbox(key="launch.grid.key0").set_value("optimizer.lr")
    app.text_input(key="launch.grid.values0").set_value("0.01, 0.1")
    app.text_input(key="launch.seeds").set_value("0, 1, 2").run()
    assert app.button(key="launch.go").label == "Launch sweep (6 runs)"
    app.button(key="launch.go").click().run()
    (call,) = launched["sweep"]
    assert call["grid"] == {"optimizer.lr": [0.01, 0.1]}
    assert call["seeds"] == [0, 1, 2]
    assert any("Launched 6 runs in sweep `sweep-fake`" in s for s in texts(app.success))


# ------------------------------------------------------------------- form edits and errors


def test_switching_objective_kind_keeps_each_kinds_choice_and_options(home):
    """Head simplex with margin "auto", then kind loss, must not leak the head's
    options into the loss nor pick another loss; switching back restores the head."""
    app = open_page("views/launch.py")
    app.selectbox(key="lf0.objective.name.loss").set_value("semihard_triplet").run()
    app.selectbox(key="lf0.objective.kind").set_value("head").run()
    app.selectbox(key="lf0.objective.name.head").set_value("simplex").run()
    app.text_input(key="lf0.objective.options.head.simplex.margin").set_value("auto").run()
    assert not app.error
    app.selectbox(key="lf0.objective.kind").set_value("loss").run()
    assert not app.exception and not app.error
    assert app.selectbox(key="lf0.objective.name.loss").value == "semihard_triplet"
    assert app.session_state["launch.draft"]["objective"]["options"] == {}
    assert app.number_input(key="lf0.objective.options.loss.semihard_triplet.margin").value == 0.1
    assert not app.button(key="launch.go").disabled
    app.selectbox(key="lf0.objective.kind").set_value("head").run()
    assert app.selectbox(key="lf0.objective.name.head").value == "simplex"
    assert app.text_input(key="lf0.objective.options.head.simplex.margin").value == "auto"
    assert app.session_state["launch.draft"]["objective"]["options"] == {"margin": "auto"}


def test_a_cleared_number_is_reported_not_replaced_by_an_old_value(home):
    """Clearing a number must not bring back an earlier value."""
    app = open_page("views/launch.py")
    lr = "lf0.optimizer.lr"
    app.number_input(key=lr).set_value(0.005).run()
    app.number_input(key=lr).set_value(0.002).run()
    app.number_input(key=lr).set_value(None).run()
    assert not app.exception
    assert app.number_input(key=lr).value is None
    assert any(e.startswith("optimizer.lr: enter a value") for e in texts(app.error))
    assert app.button(key="launch.go").disabled
    app.number_input(key=lr).set_value(0.003).run()
    assert not app.error and not app.button(key="launch.go").disabled
    assert app.session_state["launch.draft"]["optimizer"]["lr"] == pytest.approx(0.003)


def _sweep(app, values: str, seeds: str):
    app.toggle(key="launch.sweep").set_value(True).run()
    app.selectbox(key="launch.grid.key0").set_value("optimizer.lr")
    app.text_input(key="launch.grid.values0").set_value(values)
    app.text_input(key="launch.seeds").set_value(seeds).run()
    return app


def test_sweep_values_are_validated_before_launch(home, launched):
    """An invalid grid value disables the button with the field's message."""
    app = _sweep(open_page("views/launch.py"), "0.01, -1", "0, 1")
    assert not app.exception
    button = app.button(key="launch.go")
    assert button.disabled
    problems = [e for e in texts(app.error) if "optimizer.lr=-1" in e]
    assert problems and "optimizer.lr: -1.0 is below the minimum" in problems[0]
    assert "optimizer.lr=-1" in button.help
    app.text_input(key="launch.grid.values0").set_value("0.01, 0.1").run()
    assert not app.button(key="launch.go").disabled


def test_sweep_seeds_are_parsed_strictly(home, launched):
    """Seeds "a, b" are an error naming the field, never dropped silently."""
    app = _sweep(open_page("views/launch.py"), "0.01, 0.1", "a, b")
    assert any(e.startswith("Seeds: 'a' is not a whole number") for e in texts(app.error))
    assert app.button(key="launch.go").disabled
    app.text_input(key="launch.seeds").set_value("3, 4").run()
    assert app.button(key="launch.go").label == "Launch sweep (4 runs)"
    app.button(key="launch.go").click().run()
    assert launched["sweep"][0]["seeds"] == [3, 4]


def test_error_names_its_tab_and_shows_inside_it(home):
    """An error for a field on another tab is shown on that tab and named above
    the tabs, not only in the bottom banner."""
    app = open_page("views/launch.py")
    app.number_input(key="lf0.data.samples_per_class").set_value(0).run()
    message = next(e for e in texts(app.error) if e.startswith("data.samples_per_class: 0"))
    data_tab = app.tabs[0]
    assert data_tab.label == "Data"
    assert message in texts(data_tab.error)
    assert any(w.startswith("Fix the config on tab Data:") for w in texts(app.warning))
    assert any(e.startswith("Invalid config (tab Data)") for e in texts(app.error))


def test_a_batch_that_does_not_split_across_devices_is_shown_under_training_devices(home):
    """The device rule raises a ConfigError about training.devices, so the form shows it
    on the Training tab next to the field (and on the Data tab, beside the batch size),
    not only above the tabs."""
    app = open_page("views/launch.py")
    app.number_input(key="lf0.data.batch_size").set_value(40).run()
    app.number_input(key="lf0.data.samples_per_class").set_value(8).run()
    app.number_input(key="lf0.training.devices").set_value(2).run()

    assert not app.exception
    message = next(e for e in texts(app.error) if e.startswith("training.devices: 2 "))
    assert "does not divide the 5 classes of a P×K batch" in message
    tabs = {tab.label: tab for tab in app.tabs}
    assert message in texts(tabs["Training"].error)
    assert message in texts(tabs["Data"].error)
    assert any(w.startswith("Fix the config on tab Training and Data:") for w in texts(app.warning))
    assert app.button(key="launch.go").disabled


def test_missing_data_root_is_shown_next_to_the_field(home, tmp_path):
    """The form validates like the launcher, so a missing data.root is reported
    inline on the Data tab before launch."""
    from sphere_engine.validation import validate

    missing = str(tmp_path / "no-such-folder")
    try:
        validate(RunConfig.from_dict({"data": {"name": "mnist", "root": missing}}))
    except ValueError:
        pass
    else:
        pytest.skip("sphere_engine.validation.validate does not check data.root on this branch")
    app = open_page("views/launch.py")
    app.selectbox(key="lf0.data.name").set_value("mnist").run()
    app.text_input(key="lf0.data.root").set_value(missing).run()
    assert any(e.startswith("data.root:") for e in texts(app.tabs[0].error))
    assert app.button(key="launch.go").disabled


def test_labels_are_readable_and_counts_are_pluralised(home):
    """Labels come from the config's declared labels, not raw field names."""
    app = open_page("views/launch.py")
    assert app.number_input(key="lf0.data.samples_per_class").label == "Samples per class (K)"
    assert app.text_input(key="lf0.data.root").label == "Data folder"
    assert app.text_input(key="lf0.optimizer.head_lr").label == "Head learning rate"
    assert app.number_input(key="lf0.objective.options.loss.triplet.margin").label == "Margin"
    app.selectbox(key="launch.preset").set_value("smoke").run()
    assert app.button(key="launch.preset.go").label == "Launch preset (1 run)"


def test_absurd_settings_are_confirmed_before_launch_and_the_launch_toasts_a_link(home, launched):
    """10M steps or lr ≥ 10 are warned about and launch only once
    confirmed; the launch says so in a toast (in view wherever the page is scrolled)
    with a link to the run."""
    app = open_page("views/launch.py")
    app.number_input(key="lf0.training.steps").set_value(10_000_000).run()
    assert any("training.steps` = 10,000,000" in w for w in texts(app.warning))
    assert app.button(key="launch.go").disabled
    app.checkbox(key="launch.confirm").check().run()
    assert not app.button(key="launch.go").disabled
    app.button(key="launch.go").click().run()
    assert len(launched["launch"]) == 1
    toasts = [t.value for t in app.toast]
    assert any("Launched [" in t and "](run?run_id=" in t for t in toasts), toasts


def test_the_estimated_duration_comes_from_recent_runs_of_the_model(filled):
    from app import data, launch_checks

    config = data.run(filled.sec).config
    frame = data.runs()
    guess = launch_checks.estimate({**config, "training": {"steps": 6000}}, frame)
    assert guess is not None and guess.model == config["model"]["name"]
    assert guess.seconds == pytest.approx(6000 / guess.steps_per_s)
    other = {**config, "model": {"name": "no-such-model"}, "training": {"steps": 10}}
    assert launch_checks.estimate(other, frame) is None
    other_data = {**config, "data": {**config["data"], "name": "mnist"}}
    assert launch_checks.estimate(other_data, frame) is None  # same model, other data
    assert launch_checks.absurd_settings({"optimizer": {"lr": 10}}) == [
        "`optimizer.lr` = 10 is an unusually large learning rate (≥ 10)."
    ]


def test_model_section_lists_every_backbone_with_its_parameter_count(home):
    """Counts from the torch-free declarations, for the embedding the form sets; the
    chosen backbone in bold."""
    from sphere_engine.catalogue.backbones import BACKBONE_SIZES

    def sizes_caption(app) -> str:
        [caption] = [t for t in texts(app.caption) if t.startswith("Parameters with a ")]
        return caption

    app = open_page("views/launch.py")
    app.selectbox(key=_form_key(app, "model.name")).set_value("resnet50").run()
    caption = sizes_caption(app)
    # the default 64-d embedding; resnet50: 23,508,032 in the trunk + 2,049 × 64
    assert caption.startswith("Parameters with a 64-d embedding: ")
    assert "**resnet50 23.6 M**" in caption and "resnet18 11.2 M" in caption
    for name in BACKBONE_SIZES:
        assert f"{name} " in caption
    app.number_input(key=_form_key(app, "model.embedding_dim")).set_value(512).run()
    caption = sizes_caption(app)
    assert caption.startswith("Parameters with a 512-d embedding: ")
    assert "**resnet50 24.6 M**" in caption and "mlp 91 k" in caption


def test_the_estimate_leaves_out_warm_up_and_unfinished_runs(store):
    """A 15 s run whose start-up took 5 s: the estimate is its steady rate, not its
    average; a running (or failed) run of the same model and data makes none."""
    from app_fixtures import config as run_config

    from app import data, launch_checks

    config = run_config()
    rates = {"finished": 20.0, "running": 1.0}
    for status, rate in rates.items():
        run_id = store.create_run(config, status)
        store.start_run(run_id)
        with store.tracker(run_id, flush_interval=0) as tracker:
            for step in range(1, 201):  # 20 slow steps (warm-up: 5 s), then ``rate``
                wall = 1000.0 + (step / 4 if step <= 20 else 5 + (step - 20) / rate)
                tracker.track_many({"loss/total": 1.0}, step, wall_time=wall)
        if status == "finished":
            store.end_run(run_id, "finished")
    guess = launch_checks.estimate({**config, "training": {"steps": 2000}}, data.runs())
    assert guess is not None and guess.runs == 1
    assert guess.steps_per_s == pytest.approx(20.0, rel=0.05)
    assert guess.seconds == pytest.approx(100.0, rel=0.05)
