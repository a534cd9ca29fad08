"""The run pickers at lab scale: a store of 300 runs, pickers that offer at most
``PICK_LIMIT`` (50) of them plus the picked ones, and a search box answered by the run
catalogue that finds an old run the list does not offer, and picks it."""

from __future__ import annotations

import pytest
from app_fixtures import open_page
from many_runs import MANY_RUNS as RUNS
from many_runs import OLD_NAME

from app.data.run_catalogue import PICK_LIMIT

PICKERS = {
    "views/run.py": "run.select",
    "views/explorer.py": "explorer.run",
    "views/geometry.py": "geometry.run0",
}


@pytest.fixture
def many(many_runs) -> list[str]:
    """300 finished runs, oldest first (the oldest is named ``OLD_NAME``)."""
    return many_runs[1]


def test_the_bound_is_below_the_store(many) -> None:
    assert PICK_LIMIT == 50 < RUNS


@pytest.mark.parametrize("page", list(PICKERS))
def test_a_picker_offers_a_bounded_list_and_its_search_finds_an_old_run(many, page) -> None:
    key = PICKERS[page]
    app = open_page(page)
    assert not app.exception
    box = app.selectbox(key=key)
    assert box.value == many[-1]  # the newest run with results
    assert len(box.options) == PICK_LIMIT
    assert not any(OLD_NAME in option for option in box.options)

    app.text_input(key=f"{key}.search").input(OLD_NAME[:10]).run()
    box = app.selectbox(key=key)
    assert not app.exception
    # the search's match, and the run shown (kept: a search does not change the pick)
    assert [o.split(" · ")[0] for o in box.options] == ["sweep-run-0299", OLD_NAME]
    box.set_value(many[0]).run()
    assert not app.exception
    assert app.selectbox(key=key).value == many[0]
    assert app.query_params["run_id"] == many[0]  # the link names it


def test_a_link_to_an_old_run_picks_it_though_the_list_does_not_offer_it(many) -> None:
    app = open_page("views/run.py", {"run_id": many[0]})
    assert not app.exception and not app.warning
    box = app.selectbox(key="run.select")
    assert box.value == many[0]
    assert len(box.options) == PICK_LIMIT + 1


def test_geometry_side_by_side_pickers_stay_bounded(many) -> None:
    app = open_page("views/geometry.py", {"run_id": many[0]})
    app.toggle(key="geometry.pair").set_value(True).run()
    assert not app.exception
    boxes = [app.selectbox(key=f"geometry.run{slot}") for slot in (0, 1)]
    assert [b.value for b in boxes] == [many[0], many[-1]]
    assert all(len(b.options) <= PICK_LIMIT + 1 for b in boxes)


def test_compare_offers_a_bounded_list_and_adds_a_searched_old_run(many) -> None:
    app = open_page("views/compare.py", {"runs": f"{many[-1]},{many[0]}"})
    assert not app.exception
    runs = app.multiselect(key="compare.runs")
    assert runs.value == [many[-1], many[0]]  # the link's runs, the old one included
    assert len(runs.options) == PICK_LIMIT + 1

    app.multiselect(key="compare.runs").set_value([many[-1]]).run()
    assert app.multiselect(key="compare.runs").value == [many[-1]]
    app.text_input(key="compare.runs.search").input("needle").run()
    runs = app.multiselect(key="compare.runs")
    assert len(runs.options) == 2 and any(OLD_NAME in o for o in runs.options)
    runs.set_value([many[-1], many[0]]).run()
    assert not app.exception
    assert app.multiselect(key="compare.runs").value == [many[-1], many[0]]
