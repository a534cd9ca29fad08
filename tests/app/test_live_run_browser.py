"""The live Run page in headless Chromium against the real stack: its chart element
polls the live feed and inserts the new rows into its Vega views in place, keeping the
rows they hold (watching must be cheap), and zooming one chart zooms them all."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from app_fixtures import config, scalars
from dashboard_server import ARTIFACTS, CHROMIUM, CHROMIUM_ARGS

from db.store import RunStore

pytestmark = pytest.mark.e2e

CHARTS = ".spherescope-live-chart"  # app.panels.live_charts
#: the open tab's charts (no evaluation yet): the three loss terms, norms, variance, cosines
OVERVIEW_CHARTS = 6
#: Keep the drawn Vega views (canvas or svg elements) to look at them after a refresh.
_KEEP_VIEWS_JS = f"""() => {{
  window.__views = Array.from(document.querySelectorAll('{CHARTS}'),
    chart => chart.querySelector('canvas, svg'));
  return window.__views.filter(view => view !== null).length;
}}"""
_VIEWS_KEPT_JS = "() => window.__views.filter(view => view && view.isConnected).length"
_FIRST_PICTURE_JS = f"""() => {{
  const view = document.querySelector('{CHARTS} canvas, {CHARTS} svg');
  return view.tagName === 'CANVAS' ? view.toDataURL() : view.outerHTML;
}}"""


def _log(store: RunStore, run_id: str, steps: range) -> None:
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in steps:
            custom = {"acc/train": 0.5, "acc/val": 0.4}  # names of the user's own (SDK)
            tracker.track_many({**scalars(step, 0.1 + 0.01 * step), **custom}, step)
            tracker.track_progress(step, 1000)
    store.heartbeat(run_id, steps[-1], 1000)  # not lost while the test watches


def _running_run(home, name: str, steps: int) -> tuple[RunStore, str]:
    """A running run in the store ``home`` (where the stack reads) that has
    logged steps 1..``steps``."""
    store = RunStore(home)
    run_id = store.create_run(config(), name)
    store.set_status(run_id, "running", device="cpu")
    _log(store, run_id, range(1, steps + 1))
    return store, run_id


def test_a_live_refresh_updates_the_chart_views_in_place(shared_stack, stack_home):
    from playwright.sync_api import sync_playwright

    store, run_id = _running_run(stack_home, "watched run", steps=20)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # tall enough for the overview's three rows of charts
        page = browser.new_page(viewport={"width": 1400, "height": 1800})
        page.goto(f"{shared_stack}/run?run_id={run_id}")
        page.get_by_text("up to step 20").first.wait_for(timeout=60_000)
        page.locator(CHARTS).nth(OVERVIEW_CHARTS - 1).wait_for(timeout=120_000)
        page.wait_for_timeout(1500)  # the views finish drawing
        kept = page.evaluate(_KEEP_VIEWS_JS)
        assert kept >= OVERVIEW_CHARTS
        before = page.evaluate(_FIRST_PICTURE_JS)
        _log(store, run_id, range(21, 41))
        page.get_by_text("up to step 40").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)  # the new rows reach the views
        assert page.evaluate(_VIEWS_KEPT_JS) == kept  # no view was embedded anew
        after = page.evaluate(_FIRST_PICTURE_JS)
        assert after != before  # and they show the new points
        # The header's fragment reruns every 10 s (``HEADER_S`` of app/views/run.py, a
        # page script: not importable here); the page re-renders the element with its
        # script run's data, older than what the feed brought since: kept newer.
        for _ in range(24):
            page.wait_for_timeout(500)
            assert "up to step 40" in page.locator(".spherescope-live-caption").inner_text()
        assert page.evaluate(_FIRST_PICTURE_JS) == after
        # Another tab of charts is read and drawn when opened (lazy tabs), live too.
        norms = page.get_by_role("tab", name="Norms")
        norms.click()
        page.wait_for_function(
            f"document.querySelectorAll('{CHARTS}').length !== {kept}", timeout=30_000
        )
        assert norms.get_attribute("aria-selected") == "true"
        _log(store, run_id, range(41, 51))
        page.get_by_text("up to step 50").first.wait_for(timeout=30_000)
        assert page.locator(CHARTS).count() >= 1
        _check_evaluation_tile(page, store, run_id)
        _check_top_of_page_and_link(page, store, run_id)
        browser.close()


_TILE_TEXTS_JS = (
    "() => Array.from(document.querySelectorAll('.spherescope-tile'), t => t.innerText).join(' | ')"
)


def _check_evaluation_tile(page, store: RunStore, run_id: str) -> None:
    """An evaluation in flight has its own tile (step, time), gone when done."""
    with store.tracker(run_id, flush_interval=0) as tracker:
        tracker.track(1.0, "eval/pending", 50)  # as the background evaluation submits
    page.wait_for_function(
        f"() => ({_TILE_TEXTS_JS})().includes('Evaluation running')", timeout=30_000
    )
    assert "step 50" in page.evaluate(_TILE_TEXTS_JS)
    with store.tracker(run_id, flush_interval=0) as tracker:
        tracker.track_eval({"eval/seconds": 4.0, "recall@1": 0.5}, 50)  # collected
    page.wait_for_function(
        f"() => !({_TILE_TEXTS_JS})().includes('Evaluation running')", timeout=30_000
    )


def _check_top_of_page_and_link(page, store: RunStore, run_id: str) -> None:
    """The key numbers and Cancel at the top, custom SDK metrics drawn, no author
    chrome, the view in the URL."""
    tiles = page.locator(".spherescope-tile")
    page.wait_for_function(
        "() => Array.from(document.querySelectorAll('.spherescope-tile'))"
        ".some(tile => tile.innerText.includes('50 of 1,000'))",
        timeout=30_000,
    )
    shown = " | ".join(tiles.all_inner_texts())
    for words in ("running", "50 of 1,000", "steps/s", "loss", "norm variance", "R@1"):
        assert words in shown, shown
    cancel = page.get_by_role("button", name="Cancel run")
    assert cancel.is_visible()
    assert cancel.bounding_box()["y"] < page.locator(CHARTS).first.bounding_box()["y"]
    assert page.get_by_text("host ").first.is_visible()
    assert page.get_by_text("Notes").first.is_visible()
    assert page.get_by_role("button", name="Deploy").count() == 0  # viewer toolbar
    custom = page.get_by_role("tab", name="Custom")
    custom.click()
    page.locator(f"{CHARTS}[data-chart='custom:acc']").wait_for(timeout=30_000)
    # The x axis and smoothing go into the URL; a reload (or the link) restores them.
    page.get_by_text("relative time").click()
    page.wait_for_url(lambda url: "x=time" in url, timeout=30_000)
    assert f"run_id={run_id}" in page.url
    page.reload()
    page.locator(CHARTS).first.wait_for(timeout=60_000)
    assert page.get_by_role("radio", name="relative time").is_checked()
    # Cancel on the page: the run is asked to stop.
    page.get_by_role("button", name="Cancel run").click()
    for _ in range(120):  # the click's rerun took over 3 s once, in a full run under load
        if store.cancel_requested(run_id):
            break
        page.wait_for_timeout(500)
    assert store.cancel_requested(run_id)


#: Each chart's x domain (``cell.vegaView``: the chart element's Vega view).
_X_DOMAINS_JS = f"""() => Array.from(document.querySelectorAll('{CHARTS}'),
  cell => cell.vegaView.scale('x').domain().map(Number))"""


#: Each chart on the page's background, its axis labels in the page's (light) ink.
_DARK_CHARTS_JS = f"""() => {{
  const ink = getComputedStyle(document.body).color;
  const light = ink.match(/\\d+/g).slice(0, 3).every(value => Number(value) > 150);
  return Array.from(document.querySelectorAll('{CHARTS}'), cell =>
    light && cell.vegaView.background() === 'transparent');
}}"""


def _zoom_in(page, box: dict, notches: int) -> None:
    """``notches`` turns of the mouse wheel over the chart in ``box``, then its redraw."""
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + 120)
    for _ in range(notches):
        page.mouse.wheel(0, -200)
        page.wait_for_timeout(50)
    page.wait_for_timeout(500)


def _flat(domains: list[list[float]]) -> list[float]:
    return [bound for domain in domains for bound in domain]


def test_zooming_one_chart_zooms_them_all_and_survives_a_refresh(shared_stack, stack_home):
    """Linked x: a wheel zoom on one chart sets every chart's x range, new rows keep
    it (the views are not embedded anew), and a double-click resets them all."""
    from playwright.sync_api import sync_playwright

    store, run_id = _running_run(stack_home, "zoomed run", steps=100)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        # tall enough for all six charts: a chart out of view draws new rows later;
        # in the dark theme (the system's), where the charts were white boxes
        page = browser.new_page(viewport={"width": 1400, "height": 2200}, color_scheme="dark")
        page.goto(f"{shared_stack}/run?run_id={run_id}")
        page.get_by_text("up to step 100").first.wait_for(timeout=60_000)
        charts = page.locator(CHARTS)
        charts.nth(OVERVIEW_CHARTS - 1).locator("canvas").wait_for(timeout=120_000)
        page.wait_for_timeout(1000)
        full = page.evaluate(_X_DOMAINS_JS)
        assert page.evaluate(_DARK_CHARTS_JS) == [True] * OVERVIEW_CHARTS
        assert len(full) == OVERVIEW_CHARTS and all(high >= 100 for _, high in full), full
        kept = page.evaluate(_KEEP_VIEWS_JS)
        box = charts.nth(0).bounding_box()
        _zoom_in(page, box, 5)
        zoomed = page.evaluate(_X_DOMAINS_JS)
        low, high = zoomed[0]
        assert high - low < 0.8 * (full[0][1] - full[0][0]), zoomed  # zoomed in
        assert all(d == pytest.approx(zoomed[0]) for d in zoomed), zoomed  # all of them
        # The zoom is in the URL: a reload (or the link) opens the charts zoomed alike.
        assert "zoom=step" in page.url, page.url
        page.reload()
        charts.nth(OVERVIEW_CHARTS - 1).locator("canvas").wait_for(timeout=120_000)
        page.wait_for_timeout(1000)
        assert _flat(page.evaluate(_X_DOMAINS_JS)) == pytest.approx(_flat(zoomed), rel=1e-4)
        kept = page.evaluate(_KEEP_VIEWS_JS)
        box = charts.nth(0).bounding_box()
        _log(store, run_id, range(101, 121))
        page.get_by_text("up to step 120").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1000)
        assert page.evaluate(_VIEWS_KEPT_JS) == kept  # new rows, same views
        assert _flat(page.evaluate(_X_DOMAINS_JS)) == pytest.approx(_flat(zoomed))  # zoomed
        page.mouse.dblclick(box["x"] + box["width"] / 2, box["y"] + 120)
        page.wait_for_timeout(500)
        reset = page.evaluate(_X_DOMAINS_JS)
        assert all(high >= 120 for _, high in reset), reset  # every chart, the whole run
        # Zoomed, then another x axis: a range in steps means nothing in seconds, so the
        # charts of the new axis show the whole run (they went blank).
        _zoom_in(page, box, 5)
        page.get_by_text("relative time").click()
        page.wait_for_function(_ALL_SHOW_TIME_JS, timeout=30_000)
        page.wait_for_timeout(500)
        assert page.evaluate(_DOMAINS_COVER_ROWS_JS) == [True] * OVERVIEW_CHARTS
        browser.close()


#: Every chart draws seconds on x (its rows have the ``time`` field).
_ALL_SHOW_TIME_JS = f"""() => {{
  const cells = Array.from(document.querySelectorAll('{CHARTS}'));
  return cells.length >= {OVERVIEW_CHARTS} && cells.every(cell => cell.vegaView
    && cell.vegaView.data('rows').length && 'time' in cell.vegaView.data('rows')[0]);
}}"""
#: Whether each chart's x domain covers its rows' times (not blank, not zoomed away).
_DOMAINS_COVER_ROWS_JS = f"""() => Array.from(document.querySelectorAll('{CHARTS}'),
  cell => {{
    const times = cell.vegaView.data('rows').map(row => row.time);
    const [low, high] = cell.vegaView.scale('x').domain().map(Number);
    return low <= Math.min(...times) && high >= Math.max(...times);
  }})"""


#: Installed before the page's scripts: keeps every answer of the live feed.
_RECORD_ANSWERS_JS = """(() => {
  window.__liveAnswers = [];
  const fetched = window.fetch;
  window.fetch = async (...args) => {
    const response = await fetched(...args);
    if (String(args[0]).includes('/_spherescope/live/')) {
      response.clone().json().then(answer => window.__liveAnswers.push(answer), () => null);
    }
    return response;
  };
})();"""
#: Keep each chart's row objects (its Vega view's tuples) to compare after a refresh.
_KEEP_ROWS_JS = f"""() => {{
  window.__rows = Array.from(document.querySelectorAll('{CHARTS}'),
    cell => cell.vegaView.data('rows').slice());
  window.__liveAnswers.length = 0;
  return window.__rows.map(rows => rows.length);
}}"""
#: Per chart: whether its view still holds every row object it held, and its rows'
#: (step, series) pairs: each once.
_ROWS_NOW_JS = f"""() => Array.from(document.querySelectorAll('{CHARTS}'), (cell, index) => {{
  const now = cell.vegaView.data('rows');
  const held = new Set(now);
  const pairs = now.map(row => `${{row.step}}:${{row.name ?? row.sample ?? ''}}`);
  return {{kept: window.__rows[index].every(row => held.has(row)), rows: now.length,
           unique: new Set(pairs).size, last: Math.max(...now.map(row => row.step))}};
}})"""


def test_a_poll_sends_only_the_new_rows_and_the_views_keep_theirs(shared_stack, stack_home):
    """Watching must be cheap: once a tab holds a chart's rows, the feed answers with
    the rows logged since (not all of them again); the chart's view keeps the rows it
    held (not parsed, ingested and laid out again), adds the new ones once each, and
    keeps its zoom."""
    from playwright.sync_api import sync_playwright

    store, run_id = _running_run(stack_home, "appended run", steps=40)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2200})
        page.add_init_script(_RECORD_ANSWERS_JS)
        page.goto(f"{shared_stack}/run?run_id={run_id}")
        page.get_by_text("up to step 40").first.wait_for(timeout=60_000)
        charts = page.locator(CHARTS)
        charts.nth(OVERVIEW_CHARTS - 1).locator("canvas").wait_for(timeout=120_000)
        page.wait_for_timeout(1500)
        _zoom_in(page, charts.nth(0).bounding_box(), 3)
        zoomed = page.evaluate(_X_DOMAINS_JS)
        held = page.evaluate(_KEEP_ROWS_JS)
        assert len(held) == OVERVIEW_CHARTS and all(held), held
        _log(store, run_id, range(41, 61))
        page.get_by_text("up to step 60").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)  # the new rows reach the views
        answers = page.evaluate("() => window.__liveAnswers")
        changed = [chart for answer in answers for chart in answer.get("charts", [])]
        assert changed, answers
        for chart in changed:  # only what the tab lacked
            assert "rows" not in chart and "spec" not in chart, chart
            assert chart["drop"] == [] and min(chart["add"]["step"]) > 40, chart
        now = page.evaluate(_ROWS_NOW_JS)
        for before, chart in zip(held, now, strict=True):
            assert chart["kept"] and chart["last"] == 60, chart  # the old rows stay
            assert chart["rows"] == chart["unique"] > before, chart  # the new ones once
        assert _flat(page.evaluate(_X_DOMAINS_JS)) == pytest.approx(_flat(zoomed))
        page.screenshot(path=ARTIFACTS / "run-live-appended.png")
        browser.close()


#: Each chart's last drawn step (``cell.vegaView``'s rows).
_LAST_DRAWN_JS = f"""() => Array.from(document.querySelectorAll('{CHARTS}'),
  cell => Math.max(...cell.vegaView.data('rows').map(row => row.step)))"""
_HIDE_JS = """hidden => {
  Object.defineProperty(document, 'hidden', {configurable: true, get: () => hidden});
  document.dispatchEvent(new Event('visibilitychange'));
}"""


def test_charts_out_of_view_and_hidden_tabs_wait_to_be_seen(shared_stack, stack_home):
    """Watching must be cheap: a chart scrolled out of view keeps its new rows aside
    and draws them when it comes into view; a hidden tab stops polling and catches up
    when it is back in front."""
    from playwright.sync_api import sync_playwright

    store, run_id = _running_run(stack_home, "long page", steps=20)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 600})  # 2nd row 400 px below
        page.goto(f"{shared_stack}/run?run_id={run_id}")
        page.get_by_text("up to step 20").first.wait_for(timeout=60_000)
        charts = page.locator(CHARTS)
        charts.nth(OVERVIEW_CHARTS - 1).locator("canvas").wait_for(timeout=120_000)
        page.wait_for_timeout(1000)
        assert page.evaluate(_LAST_DRAWN_JS) == [20] * OVERVIEW_CHARTS
        # the first row of charts at the top of the view (the tiles and findings above
        # them fill the first screen), the second row more than the observer's 200 px
        # margin below it, out of view
        charts.first.evaluate("cell => cell.scrollIntoView({block: 'start'})")
        page.set_viewport_size({"width": 1400, "height": 200})  # 2nd row > 200 px below
        page.wait_for_timeout(500)
        _log(store, run_id, range(21, 41))
        page.get_by_text("up to step 40").first.wait_for(timeout=30_000)
        page.wait_for_timeout(1500)
        drawn = page.evaluate(_LAST_DRAWN_JS)
        assert drawn[0] == 40 and drawn[-1] == 20, drawn  # on screen, out of view
        charts.nth(OVERVIEW_CHARTS - 1).scroll_into_view_if_needed()
        page.wait_for_function(f"() => ({_LAST_DRAWN_JS})().at(-1) === 40", timeout=5_000)
        # another browser tab in front: no polls, then a catch-up at once
        page.evaluate(_HIDE_JS, True)
        _log(store, run_id, range(41, 61))
        page.wait_for_timeout(3000)
        assert "up to step 40" in page.locator(".spherescope-live-caption").inner_text()
        page.evaluate(_HIDE_JS, False)
        page.get_by_text("up to step 60").first.wait_for(timeout=3_000)
        browser.close()


def test_the_live_feed_route_answers_with_clear_errors(shared_stack):
    """A poll with no such token (never issued, or dropped) is 410 Gone, which makes
    the page open a new feed; a bad ``after`` is a 400 naming the field."""
    for query, status, words in [
        ("no-such-token?after=3", 410, "token: no such live feed"),
        ("no-such-token?after=three", 400, "after: 'three' is not a step number"),
    ]:
        with pytest.raises(urllib.error.HTTPError) as error:
            urllib.request.urlopen(f"{shared_stack}/_spherescope/live/{query}", timeout=10)
        assert error.value.code == status
        assert words in json.loads(error.value.read())["error"]


#: Each chart's id and the top of its y domain.
_Y_TOPS_JS = f"""() => Object.fromEntries(Array.from(document.querySelectorAll('{CHARTS}'),
  cell => [cell.dataset.chart, Math.max(...cell.vegaView.scale('y').domain().map(Number))]))"""


def test_each_loss_term_has_its_own_scale_and_a_zero_term_no_chart(shared_stack, stack_home):
    """With a regulariser term 500 times the metric loss, the loss chart
    showed the total and the metric term as a flat line at 0; a term zero at every step
    (η = 0) drew a line of its own."""
    from playwright.sync_api import sync_playwright

    store = RunStore(stack_home)
    run_id = store.create_run(config(), "big regulariser term")
    store.set_status(run_id, "running", device="cpu")
    with store.tracker(run_id, flush_interval=0) as tracker:
        for step in range(1, 21):
            terms = {"loss/total": 1.0 / step, "loss/sec": 500.0 + step, "loss/l2": 0.0}
            tracker.track_many({**scalars(step, 0.1), **terms}, step)
    store.set_status(run_id, "finished")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1400, "height": 2200})
        page.goto(f"{shared_stack}/run?run_id={run_id}")
        page.wait_for_function(  # every chart drawn (slow on a loaded machine)
            f"n => document.querySelectorAll('{CHARTS} canvas').length >= n",
            arg=OVERVIEW_CHARTS,
            timeout=120_000,
        )
        tops = page.evaluate(_Y_TOPS_JS)
        browser.close()
    assert "loss:loss/l2" not in tops, tops  # zero at every step: no chart
    assert tops["loss:loss/sec"] >= 520
    assert tops["loss:loss/total"] <= 1.5 and tops["loss:loss/metric"] <= 1.5, tops
