/* Charts of bytes over time or steps (uPlot): zoom, pan, the marks drawn on
 * them. */
import { isNum } from "./text.js";
import { h, swatch } from "./dom.js";
import { bytes, timeTick } from "./format.js";
import { axisBytes, BYTE_INCRS, layoutLabels, STEP_INCRS } from "./style.js";
import { noteChart, resizers, syncGroups } from "./sections.js";

/* --- uPlot --- */

const xTime = timeTick;
// a tick between two steps says nothing (never "step 1" twice)
const xStep = (v) => (isNum(v) ? (Math.abs(v - Math.round(v)) < 1e-6 ? "step " + Math.round(v) : "") : "–");

/** A uPlot chart of bytes over time or steps. cfg: id, kind, data,
 * series, bands, hooks, xKind, height, yMax() (a floor for y's top), fit
 * (y spans the data, not from 0: small growth shows), sync (a key: charts
 * that share it share the cursor and the zoom). */
export function plot(parent, cfg) {
	const wrap = h("div", { class: "chart", id: cfg.id });
	parent.appendChild(wrap);
	const width = () => Math.max(320, wrap.clientWidth || 900);
	const isTime = cfg.xKind !== "step";
	const hooks = Object.assign({}, cfg.hooks);
	const group = cfg.sync ? (syncGroups[cfg.sync] = syncGroups[cfg.sync] || []) : null;
	if (group)
		// a zoom or pan of one chart of the group moves the others along
		hooks.setScale = [(self, key) => {
			const { min, max } = self.scales.x;
			if (key === "x") for (const o of group) if (o !== self && (o.scales.x.min !== min || o.scales.x.max !== max)) o.setScale("x", { min, max });
		}];
	const opts = {
		width: width(),
		height: cfg.height || 300,
		scales: {
			x: { time: false },
			y: { range: cfg.fit ? (u, min, max) => { const pad = Math.max((max - min) * 0.1, max * 0.002, 1); return [Math.max(0, min - pad), max + pad]; }
				: (u, min, max) => [0, Math.max(max || 0, cfg.yMax ? cfg.yMax() : 0) * 1.06 || 1] },
		},
		axes: [
			{ values: (u, splits, ai, space, incr) => splits.map((v) => (isTime ? xTime(v, incr) : xStep(v))), incrs: isTime ? undefined : STEP_INCRS },
			{ values: (u, splits) => splits.map(axisBytes), incrs: BYTE_INCRS, size: 70 },
		],
		series: [{ label: isTime ? "time" : "step", value: (u, v) => (isTime ? xTime(v, 0.001) : isNum(v) ? "step " + +v.toFixed(2) : "–") }].concat(
			cfg.series.map((s) => Object.assign({ value: (u, v) => bytes(v), spanGaps: true, width: 1.5 }, isTime && { points: { show: false } }, s))),
		bands: cfg.bands,
		cursor: { drag: { x: true, y: false }, sync: cfg.sync ? { key: cfg.sync } : undefined },
		hooks,
	};
	const u = new uPlot(opts, cfg.data, wrap);
	if (group) group.push(u);
	resizers.push(() => u.setSize({ width: width(), height: opts.height }));
	panWithShift(u, cfg.data[0]);
	noteChart(cfg.id, cfg.kind, cfg.series.length);
	return u;
}

/** Shift+drag pans (uPlot's own: drag zooms, double-click resets). In the
 * capture phase on the root, so that uPlot's selection never sees it. */
function panWithShift(u, xs) {
	const lo = xs[0], hi = xs[xs.length - 1];
	u.root.addEventListener("mousedown", (ev) => {
		if (!ev.shiftKey || ev.button !== 0 || !u.over.contains(ev.target)) return;
		ev.stopPropagation();
		ev.preventDefault();
		const { min, max } = u.scales.x, span = max - min, x0 = ev.clientX;
		const perPixel = span / Math.max(1, u.over.getBoundingClientRect().width);
		const move = (e) => {
			const from = Math.min(Math.max(min - (e.clientX - x0) * perPixel, lo), Math.max(lo, hi - span));
			u.setScale("x", { min: from, max: from + span });
		};
		const up = () => {
			document.removeEventListener("mousemove", move);
			document.removeEventListener("mouseup", up);
		};
		document.addEventListener("mousemove", move);
		document.addEventListener("mouseup", up);
	}, true);
}

/** fn(ctx, r, box) draws on the canvas: r its pixel ratio, box the plot. */
export function paint(u, fn) {
	const ctx = u.ctx;
	const r = ctx.canvas.width / Math.max(1, ctx.canvas.getBoundingClientRect().width) || 1;
	ctx.save();
	ctx.font = 11 * r + "px system-ui, sans-serif";
	ctx.textAlign = "left"; // uPlot leaves its axes' alignment behind
	ctx.textBaseline = "alphabetic";
	fn(ctx, r, u.bbox);
	ctx.restore();
}
/** Where label() puts a text of width w beside x: [left, right]. */
const labelSpan = (x, w, gap, box) => (x + gap + w > box.left + box.width ? [x - gap - w, x - gap] : [x + gap, x + gap + w]);
/** Text at (x, y), flipped to the left of x where it would overflow. */
function label(ctx, text, x, y, gap, box) {
	ctx.fillText(text, labelSpan(x, ctx.measureText(text).width, gap, box)[0], y);
}

/** The labels of vertical marks: their texts' spans at x (values) in the
 * chart's rows of text, the row each gets (layoutLabels), a dot's label
 * at (dx, dy) kept clear; in CSS pixels. */
export function markLabels(u, marks, dotMark) {
	const out = [];
	paint(u, (ctx, r, box) => {
		const gap = 3 * r, taken = [];
		if (dotMark) {
			// the dot's label: its row band, as dot() draws it
			const px = u.valToPos(dotMark.x, "x", true), py = u.valToPos(dotMark.y, "y", true);
			ctx.font = "600 " + ctx.font;
			const [x0, x1] = labelSpan(px, ctx.measureText(dotMark.text).width, 8 * r, box);
			ctx.font = 11 * r + "px system-ui, sans-serif";
			const base = Math.max(box.top + 11 * r, py - 6 * r);
			for (let row = 1; row <= 3; row++) {
				const y = box.top + (12 + 13 * row) * r;
				if (base > y - 13 * r && base - 11 * r < y) taken.push({ row, x0, x1 });
			}
		}
		const spans = marks.map((m) => labelSpan(u.valToPos(m.x, "x", true), ctx.measureText(m.text).width, gap, box));
		layoutLabels(spans, 3, taken).forEach((row, i) => out.push({ row, x0: spans[i][0] / r, x1: spans[i][1] / r }));
	});
	return out;
}
/** A vertical line at x (dashed), labelled in text row `row` from the
 * top; from y0 to y1 (values), thick, where given. */
export function vmark(u, x, color, dash, text, row, y0, y1) {
	const px = u.valToPos(x, "x", true);
	paint(u, (ctx, r, box) => {
		if (!(px >= box.left - 1 && px <= box.left + box.width + 1)) return;
		ctx.strokeStyle = ctx.fillStyle = color;
		ctx.lineWidth = y0 === undefined ? r : 4 * r;
		ctx.setLineDash(dash.map((d) => d * r));
		ctx.beginPath();
		ctx.moveTo(px, y0 === undefined ? box.top : u.valToPos(y0, "y", true));
		ctx.lineTo(px, y0 === undefined ? box.top + box.height : Math.max(box.top, u.valToPos(y1, "y", true)));
		ctx.stroke();
		if (text) label(ctx, text, px, box.top + (12 + 13 * row) * r, 3 * r, box);
	});
}
/** A horizontal dashed line at y, labelled at its left end. */
export function hmark(u, y, color, text) {
	const py = u.valToPos(y, "y", true);
	paint(u, (ctx, r, box) => {
		if (!(py >= box.top && py <= box.top + box.height)) return;
		ctx.strokeStyle = ctx.fillStyle = color;
		ctx.lineWidth = r;
		ctx.setLineDash([6 * r, 4 * r]);
		ctx.beginPath();
		ctx.moveTo(box.left, py);
		ctx.lineTo(box.left + box.width, py);
		ctx.stroke();
		ctx.fillText(text, box.left + 4 * r, py - 4 * r);
	});
}
/** A dot at (x, y) with a bold label. */
export function dot(u, x, y, color, text) {
	const px = u.valToPos(x, "x", true), py = u.valToPos(y, "y", true);
	paint(u, (ctx, r, box) => {
		if (!(px >= box.left && px <= box.left + box.width && py >= box.top - 1 && py <= box.top + box.height + 1)) return;
		ctx.fillStyle = color;
		ctx.strokeStyle = "#fff";
		ctx.lineWidth = 2 * r;
		ctx.beginPath();
		ctx.arc(px, py, 5 * r, 0, 2 * Math.PI);
		ctx.stroke();
		ctx.fill();
		ctx.font = "600 " + ctx.font;
		label(ctx, text, px, Math.max(box.top + 11 * r, py - 6 * r), 8 * r, box);
	});
}

/** Legend entries beside uPlot's own. */
export const keyRow = (items) => h("div", { class: "key" }, items.map(([color, text, cls]) => h("span", null, swatch(color, cls), text)));
