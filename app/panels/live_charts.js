// The Run page's charts as one element (app/panels/live_charts.py): a Vega view per
// chart, kept for the life of the element; a view is embedded anew only when its spec
// changes. While the run trains, the element asks the server's live feed
// (app/panels/live_feed.py) for what changed: for each chart whose rows changed, the
// rows added and the positions of those dropped (app/panels/live_chart_wire.py's
// rows_change), which go into its view as one Vega changeset: the rows it holds stay
// (parsed, ingested and laid out once), and so does its zoom. No Streamlit script run
// per refresh; a refresh that took long (a busy machine) spaces out the next ones
// (BUSY_SHARE). A poll names the charts in view: the server builds only those anew
// (most of its time), and a chart that comes into view after polls it missed asks for
// its rows at once; one scrolled out of view keeps rows it was sent aside and draws
// them when it comes back. A hidden tab (another browser tab in front) does not poll.
// Zooming or panning one chart (wheel, drag; double-click resets) moves every chart's
// x range with it.

const LIBRARIES = ["vega.min.js", "vega-lite.min.js", "vega-embed.min.js"];
// A refresh (the server's answer, then the redraw) may take this share of the time
// between refreshes: when one takes longer than a tenth of the poll interval (a busy
// machine, a slow server, many charts), the next waits longer. Watching then gives
// way to the training it shares the machine with instead of competing with it.
const BUSY_SHARE = 0.1;
const LONGEST_WAIT_MS = 10000;
const DATASET = "rows"; // every chart's one dataset (live_chart_wire.DATASET)

function loadScript(src) {
  return new Promise((resolve, reject) => {
    const tag = document.createElement("script");
    tag.src = src;
    tag.onload = resolve;
    tag.onerror = () => reject(new Error(`could not load ${src}`));
    document.head.appendChild(tag);
  });
}

// Vendored under app/static/vega (served by Streamlit's static serving): the page
// loads nothing from the internet.
function libraries(base) {
  if (!window.__spherescopeVega) {
    window.__spherescopeVega = LIBRARIES.reduce(
      (loaded, name) => loaded.then(() => loadScript(`${base}/${name}`)),
      Promise.resolve(),
    );
  }
  return window.__spherescopeVega;
}

const parsed = (value) => (typeof value === "string" ? JSON.parse(value) : value);

// A chart's rows arrive as columns ({field: [values]}, half the bytes of records).
function records(columns) {
  const fields = Object.keys(columns);
  const count = fields.length ? columns[fields[0]].length : 0;
  const rows = new Array(count);
  for (let index = 0; index < count; index += 1) {
    const row = {};
    for (const field of fields) row[field] = columns[field][index];
    rows[index] = row;
  }
  return rows;
}
const sameRange = (a, b) =>
  a === b || (Array.isArray(a) && Array.isArray(b) && a[0] === b[0] && a[1] === b[1]);
// The nearest ancestor that scrolls its content (null: the document's viewport).
function scrollingAncestor(node) {
  for (let element = node.parentElement; element; element = element.parentElement) {
    const overflow = getComputedStyle(element).overflowY;
    if (overflow === "auto" || overflow === "scroll") return element;
  }
  return null;
}
const nextFrame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));

// The x field of a chart's spec (its layers share it) and the signal of its x zoom.
function zoomSignal(spec) {
  const parts = [spec, ...(spec.layer || [])];
  const zoom = parts.some((part) => (part.params || []).some((p) => p.bind === "scales"));
  const x = parts.map((part) => part.encoding && part.encoding.x).find(Boolean);
  return zoom && x && x.field ? `zoom_${x.field}` : null;
}

// The page's font and text colour on a transparent background: in the dark theme the
// charts were white boxes with black text.
function themed() {
  const style = getComputedStyle(document.body);
  const ink = style.color;
  const faint = "rgba(128, 128, 128, 0.25)";
  const text = { labelColor: ink, titleColor: ink };
  return {
    font: style.fontFamily,
    background: "transparent",
    title: { color: ink, subtitleColor: ink },
    axis: { ...text, gridColor: faint, domainColor: ink, tickColor: ink },
    legend: text,
    view: { stroke: faint },
  };
}

// A number as sphere_engine.catalogue.numbers.format_number writes it (its rule comes
// in the element's data): three significant digits, thousands separators, scientific
// notation outside [small, large). The tooltips show the hovered row's own fields
// (live_charts.py gives them no encoded tooltip: it cost a refresh per row).
function formatNumber(value, rule) {
  if (!Number.isFinite(value)) return "–";
  const { significant, small, large } = rule;
  const size = Math.abs(value);
  if (value !== 0 && (size < small || size >= large)) return value.toExponential(significant - 1);
  const decimals = value === 0 ? 0 : Math.max(significant - 1 - Math.floor(Math.log10(size)), 0);
  return value.toLocaleString("en-US", {
    minimumFractionDigits: decimals,
    maximumFractionDigits: decimals,
  });
}

const COUNTS = new Set(["step", "sample"]); // whole numbers: separators only

function tooltipHtml(value, sanitize, rule) {
  const shown = (field, v) => {
    if (typeof v !== "number") return String(v);
    return COUNTS.has(field) ? v.toLocaleString("en-US") : formatNumber(v, rule);
  };
  if (value === null || typeof value !== "object") return sanitize(shown("", value));
  const rows = Object.entries(value)
    .filter(([field, v]) => v !== null && v !== undefined && !field.endsWith("_text"))
    .map(([field, v]) => `<tr><td class="key">${sanitize(field)}</td>`
      + `<td class="value">${sanitize(shown(field, v))}</td></tr>`);
  return `<table>${rows.join("")}</table>`;
}

// The zoom lives in the page's URL (?zoom=step:120,480), so a reload or a pasted link
// opens the charts zoomed the same way; it names its x field, so another x axis
// ignores it.
function linkedZoom() {
  const text = new URLSearchParams(window.location.search).get("zoom") || "";
  const match = text.match(/^(\w+):(-?[\d.e+-]+),(-?[\d.e+-]+)$/);
  if (!match) return [null, null];
  const range = [Number(match[2]), Number(match[3])];
  return range.every(Number.isFinite) ? [`zoom_${match[1]}`, range] : [null, null];
}

function shareZoom(signal, range) {
  const url = new URL(window.location.href);
  if (range && signal) {
    const field = signal.replace(/^zoom_/, "");
    const [low, high] = range.map((v) => Number(Number(v).toPrecision(6)));
    url.searchParams.set("zoom", `${field}:${low},${high}`);
  } else {
    url.searchParams.delete("zoom");
  }
  window.history.replaceState(window.history.state, "", url);
}

class LiveGrid {
  constructor(parent) {
    this.root = document.createElement("div");
    this.root.className = "spherescope-live";
    this.grid = document.createElement("div");
    this.grid.className = "spherescope-live-grid";
    this.caption = document.createElement("p");
    this.caption.className = "spherescope-live-caption";
    this.notes = document.createElement("p");
    this.notes.className = "spherescope-live-notes";
    this.root.append(this.caption, this.grid, this.notes);
    parent.appendChild(this.root);
    // chart id → {specText, rowsText, rows, shown, stale, view, cell, zoom, onScreen}:
    // rows are the chart's rows in the feed's order (each drop names a position in
    // them), shown the set of those in its view; stale: rows changed since the view
    // last drew them. onScreen is undefined until the observer first reports on the
    // chart (drawn meanwhile).
    this.views = new Map();
    // Drawing rows nobody sees costs the browser (and the training beside it) as much
    // as drawing them on screen: charts near the viewport only (200 px ahead).
    this.visibility = null; // an IntersectionObserver, made with the first chart
    // Back in front: catch up now (removed by dispose(): the document would otherwise
    // keep a grid the page no longer shows alive, with its views).
    this.onVisibility = () => {
      if (!document.hidden && this.feed && !this.fetching) this.poll(0);
    };
    document.addEventListener("visibilitychange", this.onVisibility);
    this.queue = Promise.resolve();
    // The linked x range and the zoom signal it belongs to (null when not zoomed): a
    // range in steps means nothing on a time axis, so charts of another x start whole.
    [this.zoomSignal, this.zoom] = linkedZoom();
    this.lastStep = 0;
    this.seq = null; // the feed's number of the rows this grid holds (null: unknown)
    this.feed = null;
    this.timer = null;
    this.cost = 0; // milliseconds the last refresh took (its answer and redraw)
  }

  // A script run's data: every chart, and the feed to poll while the run trains.
  mount(data, trigger) {
    this.trigger = trigger;
    // Should the page hand over the same script run's data again (a re-render), it is
    // older than what the feed has brought since: keep the newer.
    if (data.revision === this.revision) return;
    this.revision = data.revision;
    this.feed = data.feed;
    this.numbers = data.numbers;
    this.enqueue(data).then(() => this.poll());
  }

  enqueue(update) {
    this.queue = this.queue
      .then(() => libraries(this.libraries || (this.libraries = update.libraries)))
      .then(() => this.apply(update))
      .catch((error) => console.error("SphereScope live charts:", error));
    return this.queue;
  }

  async apply(update) {
    // Changes to rows this grid no longer holds (a script run's charts were drawn
    // after the poll was answered): dropped; the next poll names what it holds.
    if (update.applies_to != null && update.applies_to !== this.seq) return;
    if (update.seq !== undefined) this.seq = update.seq;
    if (update.charts) await this.draw(update.charts);
    // After the charts: "up to step N" names what they show.
    if (update.caption !== undefined) this.caption.textContent = update.caption;
    if (update.notes !== undefined) this.notes.textContent = update.notes.join(" ");
    if (update.last_step !== undefined) this.lastStep = update.last_step;
  }

  async draw(charts) {
    const wanted = new Set(charts.map((chart) => chart.id));
    for (const [id, held] of this.views) {
      if (!wanted.has(id)) this.drop(id, held);
    }
    for (const chart of charts) {
      let held = this.views.get(chart.id);
      if (held && chart.spec !== undefined && chart.spec !== held.specText) {
        this.drop(chart.id, held);
        held = undefined;
      }
      if (!held) {
        if (chart.rows === undefined) {
          this.seq = null; // changes to a chart this grid lacks: the next poll asks anew
          continue;
        }
        held = await this.embed(chart);
        await nextFrame(); // each chart is on screen before the next is embedded
      } else if (chart.rows !== undefined) {
        this.replaceRows(held, chart.rows);
      } else if (chart.add !== undefined) {
        this.changeRows(held, chart.drop, chart.add);
      }
      if (held.stale && held.onScreen !== false) await this.sync(held); // else when seen
      this.grid.appendChild(held.cell); // keeps the charts in the feed's order
    }
  }

  // Watch a chart's cell come into and go out of view (200 px ahead of the page's
  // scrolling container: Streamlit's main section scrolls, not the document).
  observe(cell) {
    if (!this.visibility) {
      this.visibility = new IntersectionObserver(
        (entries) => {
          for (const entry of entries) {
            const held = entry.target.held;
            held.onScreen = entry.isIntersecting;
            // polls went by without it: ask now for its rows (built for charts in view)
            if (held.onScreen && held.missed && this.feed && !this.fetching) this.poll(0);
            if (held.onScreen && held.stale) {
              const current = () => this.views.get(held.cell.dataset.chart) === held;
              this.queue = this.queue
                .then(() => (current() && held.stale ? this.sync(held) : null))
                .catch((error) => console.error("SphereScope live charts:", error));
            }
          }
        },
        { root: scrollingAncestor(this.root), rootMargin: "200px 0px" },
      );
    }
    this.visibility.observe(cell);
  }

  // All of a chart's rows anew (a script run's, or most of them changed).
  replaceRows(held, rows) {
    const text = typeof rows === "string" ? rows : null;
    if (text !== null && text === held.rowsText) return; // a re-render's same rows
    held.rowsText = text;
    held.rows = records(parsed(rows));
    held.stale = true;
  }

  // A poll's change: the rows at the positions ``drop`` are gone, ``add`` follow.
  changeRows(held, drop, add) {
    if (drop.length) {
      if (drop.some((index) => index >= held.rows.length)) this.seq = null; // out of step
      const gone = new Set(drop);
      held.rows = held.rows.filter((_, index) => !gone.has(index));
    }
    held.rows = held.rows.concat(records(add));
    held.rowsText = null;
    held.stale = true;
  }

  // Bring the view to the chart's rows: one changeset of the rows it lacks and those
  // it shows that are gone (the rows it keeps are not ingested or parsed again).
  async sync(held) {
    held.stale = false;
    const now = new Set(held.rows);
    const gone = new Set();
    for (const row of held.shown) if (!now.has(row)) gone.add(row);
    const fresh = held.rows.filter((row) => !held.shown.has(row));
    held.shown = now;
    if (!gone.size && !fresh.length) return;
    const change = window.vega.changeset().insert(fresh);
    if (gone.size) change.remove((row) => gone.has(row));
    await held.view.change(DATASET, change).runAsync();
  }

  async embed(chart) {
    const cell = document.createElement("div");
    cell.className = "spherescope-live-chart";
    cell.dataset.chart = chart.id;
    if (chart.wide) cell.classList.add("spherescope-live-wide");
    this.grid.appendChild(cell);
    const spec = parsed(chart.spec);
    const signal = zoomSignal(spec);
    spec.width = "container";
    spec.autosize = { type: "fit-x", contains: "padding" };
    const rows = records(parsed(chart.rows));
    spec.datasets = { [DATASET]: rows }; // Vega ingests these objects: they are its rows
    const { view } = await window.vegaEmbed(cell, spec, {
      actions: false,
      renderer: "canvas",
      mode: "vega-lite",
      config: themed(),
      tooltip: { formatTooltip: (value, sanitize) => tooltipHtml(value, sanitize, this.numbers) },
    });
    cell.vegaView = view; // for the browser's console and the browser tests
    const held = {
      specText: typeof chart.spec === "string" ? chart.spec : JSON.stringify(chart.spec),
      rowsText: typeof chart.rows === "string" ? chart.rows : null,
      rows,
      shown: new Set(rows),
      stale: false,
      view,
      cell,
      zoom: signal,
    };
    if (signal) {
      if (this.zoom && this.zoomSignal === signal) await view.signal(signal, this.zoom).runAsync();
      view.addSignalListener(signal, (_, range) => this.linkZoom(held, range));
    }
    this.views.set(chart.id, held);
    cell.held = held;
    this.observe(cell);
    return held;
  }

  // One chart zoomed, panned or reset (a null range): every other chart follows.
  linkZoom(source, range) {
    const value = range && range.length === 2 ? [range[0], range[1]] : null;
    if (sameRange(value, this.zoom) && this.zoomSignal === source.zoom) return;
    this.zoom = value;
    this.zoomSignal = source.zoom;
    shareZoom(source.zoom, value);
    for (const held of this.views.values()) {
      if (held === source || held.zoom !== source.zoom) continue;
      if (sameRange(held.view.signal(held.zoom), value)) continue;
      held.view.signal(held.zoom, value).runAsync();
    }
  }

  // Let go of a grid the page no longer shows: its listener, timer and observer.
  dispose() {
    document.removeEventListener("visibilitychange", this.onVisibility);
    clearTimeout(this.timer);
    this.feed = null;
    if (this.visibility) this.visibility.disconnect();
  }

  drop(id, held) {
    if (this.visibility) this.visibility.unobserve(held.cell);
    held.view.finalize();
    held.cell.remove();
    this.views.delete(id);
  }

  // Ask the feed for what changed, every poll_ms, while the run trains and the
  // element is on the page; a forgotten feed or the run's end reruns the page.
  poll(delay) {
    clearTimeout(this.timer);
    const feed = this.feed;
    if (!feed) return;
    this.timer = setTimeout(async () => {
      if (feed !== this.feed || !this.root.isConnected) return;
      if (document.hidden) return; // resumed by the visibilitychange listener
      this.fetching = true; // until the answer is drawn: one poll at a time
      const started = performance.now();
      try {
        await this.ask(feed);
      } finally {
        this.fetching = false;
      }
      this.cost = performance.now() - started;
      if (this.feed === feed) this.poll();
    }, delay === undefined ? this.wait(feed) : delay);
  }

  // The pause before the next poll: the feed's interval, longer when the last refresh
  // took more than BUSY_SHARE of it.
  wait(feed) {
    const spread = this.cost * (1 / BUSY_SHARE - 1);
    return Math.min(Math.max(feed.poll_ms, spread), LONGEST_WAIT_MS);
  }

  // One poll: draw what changed; the run's end or a forgotten feed ends the polling.
  async ask(feed) {
    let answer = null;
    // The charts in view (or not yet reported on): the server builds only those anew.
    const shown = [...this.views].filter(([, held]) => held.onScreen !== false);
    try {
      const seq = this.seq === null ? "" : this.seq; // empty: send every chart's rows whole
      const ids = encodeURIComponent(JSON.stringify(shown.map(([id]) => id)));
      const query = `after=${this.lastStep}&seq=${seq}&shown=${ids}`;
      const response = await fetch(`${feed.url}?${query}`, { cache: "no-store" });
      if (response.status === 410) {
        this.feed = null;
        this.trigger("expired", true);
        return;
      }
      const json = (response.headers.get("content-type") || "").includes("json");
      if (!json) {
        // No feed route: a server started without app/server.py's routes.
        this.feed = null;
        this.notes.textContent = "Not live: this server has no live feed (start it with spherescope up); rerun the page to refresh.";
        return;
      }
      if (!response.ok) throw new Error(`live feed answered ${response.status}`);
      answer = await response.json();
    } catch (error) {
      console.warn("SphereScope live charts:", error);
    }
    if (feed !== this.feed || !answer) return; // a newer feed meanwhile, or no answer
    await this.enqueue(answer);
    const asked = new Set(shown.map(([, held]) => held));
    for (const held of this.views.values()) held.missed = !asked.has(held);
    if (!answer.active) {
      this.feed = null;
      this.trigger("ended", true);
    }
  }
}

const grids = new WeakMap();
const living = new Set(); // the grids made on this page, until they leave it

export default function ({ parentElement, data, setTriggerValue }) {
  let grid = grids.get(parentElement);
  if (!grid) {
    for (const old of living) {
      if (!old.root.isConnected) {
        old.dispose();
        living.delete(old);
      }
    }
    grid = new LiveGrid(parentElement);
    grids.set(parentElement, grid);
    living.add(grid);
  }
  grid.mount(data, setTriggerValue);
}
