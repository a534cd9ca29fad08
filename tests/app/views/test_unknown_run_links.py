"""Links naming runs that do not exist: the page says so, naming
the id, instead of showing nothing or silently another run."""

from __future__ import annotations

from app_fixtures import open_page, texts


def test_compare_names_an_unknown_run(filled):
    app = open_page("views/compare.py", {"runs": "nope"})
    assert not app.exception
    assert any("No run with id `nope`" in w for w in texts(app.warning))


def test_compare_keeps_the_known_runs_of_a_link(filled):
    app = open_page("views/compare.py", {"runs": f"{filled.sec},nope"})
    assert any("No run with id `nope`" in w for w in texts(app.warning))
    assert app.multiselect(key="compare.runs").value == [filled.sec]


def test_geometry_names_an_unknown_run_instead_of_showing_another_silently(filled):
    app = open_page("views/geometry.py", {"run_id": "nope"})
    assert not app.exception
    assert any("No run with id `nope`" in w for w in texts(app.warning))


def test_known_links_show_no_warning(filled):
    app = open_page("views/geometry.py", {"run_id": filled.sec})
    assert not app.warning
