// The Geometry page's scatter-plot matrix on one canvas (app/panels/scatter_matrix.py).
// Row i, column j plots coordinate j (x) against coordinate i (y); the diagonal is the
// coordinate's histogram. The cells fit the element's width, tick labels sit on the
// outer axes only, and rows are drawn one per frame, so the page stays responsive
// while a large matrix is drawn. Hover a dot for its class and coordinates; click a
// class in the legend to bring its points forward (click again to clear).

const GAP = 6; // px between cells
const MARGIN = { left: 46, right: 4, top: 4, bottom: 34 };
const MAX_CELL = 180; // two or three coordinates: readable cells, not giant ones
const MIN_CELL = 24;
const TICKS = 4; // asked for: 2 to 4 round values fit a small cell
const DOT_RADIUS = 1.8; // Vega's circle of size 10
const DOT_ALPHA = 0.6;
const FADED_ALPHA = 0.06;
const CROSS = 4.5; // half the "×" of a vertex
const FRAME = "rgba(128, 128, 128, 0.3)"; // reads on a light and a dark theme
const BAR = "rgba(127, 127, 127, 0.7)";

const format = (value) => {
  const text = String(Number(value.toPrecision(3)));
  return text === "-0" ? "0" : text;
};

// About ``count`` round values inside [lo, hi].
function ticks(lo, hi, count) {
  const span = hi - lo;
  if (!(span > 0)) return [lo];
  const raw = span / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const values = [];
  const edge = span * 0.06; // a label at a cell's edge would touch the next cell's
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) {
    if (v - lo >= edge && hi - v >= edge) values.push(Math.abs(v) < step * 1e-9 ? 0 : v);
  }
  return values.length ? values : [(lo + hi) / 2];
}

class ScatterMatrix {
  constructor(parent) {
    this.root = document.createElement("div");
    this.root.className = "spherescope-matrix";
    this.title = document.createElement("p");
    this.title.className = "spherescope-matrix-title";
    const body = document.createElement("div");
    body.className = "spherescope-matrix-body";
    this.plot = document.createElement("div");
    this.plot.className = "spherescope-matrix-plot";
    this.canvas = document.createElement("canvas");
    this.tooltip = document.createElement("div");
    this.tooltip.className = "spherescope-matrix-tooltip";
    this.tooltip.hidden = true;
    this.plot.append(this.canvas, this.tooltip);
    this.legend = document.createElement("div");
    this.legend.className = "spherescope-matrix-legend";
    body.append(this.plot, this.legend);
    this.note = document.createElement("p");
    this.note.className = "spherescope-matrix-note";
    this.root.append(this.title, body, this.note);
    parent.appendChild(this.root);
    this.root.matrix = this; // for the browser tests: pixel positions of the points
    this.data = null;
    this.text = null;
    this.highlight = null; // the class brought forward, null for none
    this.drawing = 0; // bumps to cancel a draw in progress
    this.canvas.addEventListener("mousemove", (event) => this.hover(event));
    this.canvas.addEventListener("mouseleave", () => {
      this.tooltip.hidden = true;
    });
    this.resizes = new ResizeObserver(() => {
      if (this.data && this.plot.clientWidth !== this.width) this.draw();
    });
    this.resizes.observe(this.plot);
  }

  mount(text) {
    if (text === this.text) return; // a re-render with the same data
    this.text = text;
    const data = JSON.parse(text);
    data.labelIndex = data.labels.map((label) => data.classes.indexOf(label));
    this.data = data;
    if (this.highlight !== null && !data.classes.includes(this.highlight)) this.highlight = null;
    this.title.textContent = data.title;
    this.note.textContent = data.note || "";
    this.drawLegend();
    this.draw();
  }

  drawLegend() {
    const { classes, colors } = this.data;
    const heading = document.createElement("div");
    heading.className = "spherescope-matrix-legend-title";
    heading.textContent = "class";
    const entries = classes.map((name, index) => {
      const entry = document.createElement("button");
      entry.type = "button";
      entry.className = "spherescope-matrix-class";
      entry.dataset.class = name;
      entry.title = `Bring class ${name} forward (click again to clear)`;
      const swatch = document.createElement("span");
      swatch.className = "spherescope-matrix-swatch";
      swatch.style.background = colors[index];
      entry.append(swatch, document.createTextNode(name));
      entry.addEventListener("click", () => {
        this.highlight = this.highlight === name ? null : name;
        this.markLegend();
        this.draw();
      });
      return entry;
    });
    this.legend.replaceChildren(heading, ...entries);
    this.markLegend();
  }

  markLegend() {
    for (const entry of this.legend.querySelectorAll(".spherescope-matrix-class")) {
      entry.classList.toggle("faded", this.highlight !== null && entry.dataset.class !== this.highlight);
      entry.setAttribute("aria-pressed", String(entry.dataset.class === this.highlight));
    }
  }

  // Cell size and pixel scales for the current width.
  layout() {
    const count = this.data.coords.length;
    this.width = this.plot.clientWidth;
    const room = this.width - MARGIN.left - MARGIN.right - GAP * (count - 1);
    const cell = Math.max(MIN_CELL, Math.min(MAX_CELL, Math.floor(room / Math.max(count, 1))));
    this.cell = cell;
    this.origin = (index) => index * (cell + GAP);
    const side = this.origin(count) - GAP;
    this.size = { width: MARGIN.left + side + MARGIN.right, height: MARGIN.top + side + MARGIN.bottom };
    // coordinate → [pixel of lo, pixel of hi] inside a cell (y grows downwards)
    this.scale = {};
    for (const name of this.data.coords) {
      const [lo, hi] = this.data.domains[name];
      const span = hi - lo || 1;
      this.scale[name] = {
        x: (v) => ((v - lo) / span) * cell,
        y: (v) => cell - ((v - lo) / span) * cell,
      };
    }
  }

  // Pixel of point ``index`` (or of a vertex) in cell (row, column), in CSS pixels of
  // the canvas.
  pixel(row, column, index, vertex = false) {
    const { coords, columns, vertices } = this.data;
    const source = vertex ? vertices : columns;
    const x = this.scale[coords[column]].x(source[coords[column]][index]);
    const y = this.scale[coords[row]].y(source[coords[row]][index]);
    return [MARGIN.left + this.origin(column) + x, MARGIN.top + this.origin(row) + y];
  }

  draw() {
    this.layout();
    const ratio = window.devicePixelRatio || 1;
    const { width, height } = this.size;
    this.canvas.width = Math.round(width * ratio);
    this.canvas.height = Math.round(height * ratio);
    this.canvas.style.width = `${width}px`;
    this.canvas.style.height = `${height}px`;
    const context = this.canvas.getContext("2d");
    context.setTransform(ratio, 0, 0, ratio, 0, 0);
    const style = getComputedStyle(this.plot);
    this.font = `10px ${style.fontFamily}`;
    this.ink = style.color; // axis labels
    this.strong = getComputedStyle(this.root).color; // the theme's text: vertices
    this.sprites = this.makeSprites(ratio);
    this.drawAxes(context);
    const drawing = ++this.drawing;
    const rows = this.data.coords.length;
    this.root.dataset.drawnRows = "0";
    const drawRow = (row) => {
      if (drawing !== this.drawing) return; // a newer draw started
      this.drawRow(context, row);
      this.root.dataset.drawnRows = String(row + 1);
      if (row + 1 < rows) requestAnimationFrame(() => drawRow(row + 1));
    };
    if (rows) drawRow(0);
  }

  // One small canvas per class and alpha: a dot is then one drawImage.
  makeSprites(ratio) {
    const make = (color, alpha) => {
      const size = Math.ceil((DOT_RADIUS * 2 + 2) * ratio);
      const sprite = document.createElement("canvas");
      sprite.width = sprite.height = size;
      const context = sprite.getContext("2d");
      context.globalAlpha = alpha;
      context.fillStyle = color;
      context.beginPath();
      context.arc(size / 2, size / 2, DOT_RADIUS * ratio, 0, Math.PI * 2);
      context.fill();
      return sprite;
    };
    return this.data.colors.map((color) => ({ normal: make(color, DOT_ALPHA), faded: make(color, FADED_ALPHA) }));
  }

  drawAxes(context) {
    const { coords, domains } = this.data;
    const last = coords.length - 1;
    const bottom = MARGIN.top + this.origin(last) + this.cell;
    context.font = this.font;
    context.fillStyle = this.ink;
    context.strokeStyle = FRAME;
    context.lineWidth = 1;
    coords.forEach((name, index) => {
      const [lo, hi] = domains[name];
      const scale = this.scale[name];
      const left = MARGIN.left + this.origin(index);
      const top = MARGIN.top + this.origin(index);
      context.textAlign = "center";
      context.textBaseline = "top";
      for (const value of ticks(lo, hi, TICKS)) {
        const x = left + scale.x(value);
        context.fillRect(x - 0.5, bottom, 1, 3);
        context.fillText(format(value), x, bottom + 4);
      }
      context.fillText(name, left + this.cell / 2, bottom + 18);
      context.textAlign = "right";
      context.textBaseline = "middle";
      for (const value of ticks(lo, hi, TICKS)) {
        const y = top + scale.y(value);
        context.fillRect(MARGIN.left - 3, y - 0.5, 3, 1);
        context.fillText(format(value), MARGIN.left - 5, y);
      }
      context.save();
      context.translate(10, top + this.cell / 2);
      context.rotate(-Math.PI / 2);
      context.textAlign = "center";
      context.fillText(name, 0, 0);
      context.restore();
    });
  }

  drawRow(context, row) {
    const { coords } = this.data;
    const top = MARGIN.top + this.origin(row);
    coords.forEach((_, column) => {
      const left = MARGIN.left + this.origin(column);
      context.save();
      context.beginPath();
      context.rect(left, top, this.cell, this.cell);
      context.clip();
      if (row === column) this.drawHistogram(context, row, left, top);
      else this.drawDots(context, row, column);
      context.restore();
      context.strokeStyle = FRAME;
      context.strokeRect(left + 0.5, top + 0.5, this.cell - 1, this.cell - 1);
    });
  }

  drawHistogram(context, index, left, top) {
    const counts = this.data.histograms[this.data.coords[index]];
    const most = Math.max(1, ...counts);
    const bar = this.cell / counts.length;
    context.fillStyle = BAR;
    counts.forEach((count, bin) => {
      const height = (count / most) * (this.cell - 4);
      context.fillRect(left + bin * bar, top + this.cell - height, bar, height);
    });
  }

  drawDots(context, row, column) {
    const { labelIndex, vertices, coords } = this.data;
    const ratio = window.devicePixelRatio || 1;
    const half = this.sprites.length ? this.sprites[0].normal.width / ratio / 2 : 0;
    const wanted = this.highlight === null ? -1 : this.data.classes.indexOf(this.highlight);
    const xs = this.data.columns[coords[column]];
    const ys = this.data.columns[coords[row]];
    const pass = (keep) => {
      for (let index = 0; index < labelIndex.length; index += 1) {
        const kind = labelIndex[index];
        if (kind < 0 || xs[index] === null || ys[index] === null || !keep(kind)) continue;
        const [x, y] = this.pixel(row, column, index);
        const sprite = this.sprites[kind];
        context.drawImage(wanted < 0 || kind === wanted ? sprite.normal : sprite.faded, x - half, y - half, half * 2, half * 2);
      }
    };
    if (wanted < 0) pass(() => true);
    else {
      pass((kind) => kind !== wanted); // faded first, the chosen class on top
      pass((kind) => kind === wanted);
    }
    if (!vertices) return;
    context.strokeStyle = this.strong;
    context.lineWidth = 1.5;
    const count = vertices[coords[0]].length;
    for (let index = 0; index < count; index += 1) {
      const [x, y] = this.pixel(row, column, index, true);
      context.beginPath();
      context.moveTo(x - CROSS, y - CROSS);
      context.lineTo(x + CROSS, y + CROSS);
      context.moveTo(x + CROSS, y - CROSS);
      context.lineTo(x - CROSS, y + CROSS);
      context.stroke();
    }
  }

  // The cell under (x, y) in canvas CSS pixels, or null between cells.
  cellAt(x, y) {
    const find = (offset) => {
      const index = Math.floor(offset / (this.cell + GAP));
      const inside = offset - this.origin(index);
      return index >= 0 && index < this.data.coords.length && inside >= 0 && inside <= this.cell ? index : null;
    };
    const row = find(y - MARGIN.top);
    const column = find(x - MARGIN.left);
    return row === null || column === null ? null : { row, column };
  }

  hover(event) {
    const bounds = this.canvas.getBoundingClientRect();
    const x = event.clientX - bounds.left;
    const y = event.clientY - bounds.top;
    const text = this.describe(x, y);
    this.tooltip.hidden = !text;
    if (!text) return;
    this.tooltip.textContent = text;
    this.tooltip.style.left = `${Math.min(x + 12, this.size.width - 160)}px`;
    this.tooltip.style.top = `${y + 12}px`;
  }

  // What the tooltip says at (x, y): the nearest dot or vertex within a few pixels,
  // or the histogram bar under the pointer.
  describe(x, y) {
    const cell = this.cellAt(x, y);
    if (!cell) return null;
    const { coords, columns, vertices, labels, labelIndex } = this.data;
    const { row, column } = cell;
    if (row === column) {
      const name = coords[row];
      const counts = this.data.histograms[name];
      const [lo, hi] = this.data.domains[name];
      const bin = Math.min(counts.length - 1, Math.floor(((x - MARGIN.left - this.origin(column)) / this.cell) * counts.length));
      const width = (hi - lo) / counts.length;
      return `${name} ${format(lo + bin * width)} to ${format(lo + (bin + 1) * width)}: ${counts[bin]} points`;
    }
    let best = null;
    let bestDistance = 36; // 6 px, squared
    const consider = (index, vertex) => {
      const source = vertex ? vertices : columns;
      if (source[coords[column]][index] === null || source[coords[row]][index] === null) return;
      const [px, py] = this.pixel(row, column, index, vertex);
      const distance = (px - x) ** 2 + (py - y) ** 2;
      if (distance <= bestDistance) {
        bestDistance = distance;
        best = { index, vertex };
      }
    };
    if (vertices) for (let index = 0; index < vertices[coords[0]].length; index += 1) consider(index, true);
    for (let index = 0; index < labels.length; index += 1) if (labelIndex[index] >= 0) consider(index, false);
    if (!best) return null;
    const source = best.vertex ? vertices : columns;
    const values = coords.map((name) => `${name} ${format(source[name][best.index])}`).join(" · ");
    return `${best.vertex ? "vertex" : `class ${labels[best.index]}`}\n${values}`;
  }
}

const matrices = new WeakMap();

export default function ({ parentElement, data }) {
  let matrix = matrices.get(parentElement);
  if (!matrix) {
    matrix = new ScatterMatrix(parentElement);
    matrices.set(parentElement, matrix);
  }
  matrix.mount(data.matrix);
}
