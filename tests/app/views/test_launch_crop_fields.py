"""The Launch form draws ``data.crop_scale`` and ``data.resize`` from their config
declarations (no form code of their own): labelled fields with the defaults, the
config's refusals shown under them."""

from __future__ import annotations

from app_fixtures import open_page, texts


def test_the_crop_fields_show_their_defaults_and_the_configs_refusals(home):
    app = open_page("views/launch.py")
    field = app.text_input(key="lf0.data.crop_scale")
    assert field.label == "Training crop scale"
    assert field.value == "0.08, 1.0"
    assert "0 < low <= high <= 1" in field.help
    resize = app.number_input(key="lf0.data.resize")
    assert (resize.label, resize.value) == ("Resize before cropping (px)", 0)
    assert not app.button(key="launch.go").disabled

    field.set_value("0.9, 0.1").run()
    message = next(e for e in texts(app.tabs[0].error) if e.startswith("data.crop_scale:"))
    assert message.startswith("data.crop_scale: [0.9, 0.1] is out of range; must be [low, high]")
    assert app.button(key="launch.go").disabled

    # digits has no such crops: the form says so rather than ignoring the range
    app.text_input(key="lf0.data.crop_scale").set_value("0.16, 1").run()
    assert any(
        e.startswith("data.crop_scale: dataset 'digits' does not resize and crop")
        for e in texts(app.tabs[0].error)
    )
    app.text_input(key="lf0.data.crop_scale").set_value("0.08, 1").run()
    assert not app.button(key="launch.go").disabled
