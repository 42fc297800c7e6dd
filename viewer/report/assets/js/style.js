/* The charts' axes and colours. Needs no DOM. */
import { bytes } from "./format.js";
import { isNum, obj, objs } from "./text.js";

// y ticks on powers of two (256 MiB, 512 MiB, 768 MiB, 1 GiB): decimal
// steps would cross a unit at odd values (1000 MiB, 1.17 GiB)
export const BYTE_INCRS = Array.from({ length: 51 }, (_, i) => 2 ** i);
export const axisBytes = (v) => bytes(v).replace(/\.(\d*?)0+ /, (m, keep) => (keep ? "." + keep : "") + " ");
export const STEP_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6];

export const COLOR = {
	allocated: "#2563eb", reserved: "#ea580c", other: "#9333ea", device: "#475569", cached: "#fdba74",
	outside: "#94a3b8", free: "#e5e7eb", bad: "#dc2626", peak: "#111827", step: "rgba(71,85,105,0.5)",
};
export const CATEGORY_COLOR = {
	parameters: "#2563eb", gradients: "#0891b2", "optimizer state": "#16a34a", activations: "#ea580c",
	temporaries: "#eab308", inputs: "#9333ea", other: "#64748b",
};
export const PALETTE = ["#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2", "#eab308", "#db2777", "#64748b"];
// phases; the schema says "optimizer.step", a timeline may say "optimizer"
export const PHASE_RGB = { forward: "37,99,235", backward: "234,88,12", optimizer: "22,163,74", zero_grad: "100,116,139" };
export const phaseKey = (name) => (typeof name === "string" && name.startsWith("optimizer") ? "optimizer" : name);
export const phaseColor = (name, a) => (PHASE_RGB[phaseKey(name)] ? "rgba(" + PHASE_RGB[phaseKey(name)] + "," + a + ")" : null);
export const withAlpha = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, "0");

/** Rows for labels that must not overlap: each item's span [x0, x1] goes
 * in the first of rows 1..rows where it crosses no span already there
 * (taken: spans placed before, {row, x0, x1}), 4 px apart; 0 where no row
 * has room (the mark is drawn, its text left out). Needs no DOM. */
export function layoutLabels(items, rows, taken) {
	const used = (taken || []).slice();
	return items.map(([x0, x1]) => {
		for (let row = 1; row <= rows; row++)
			if (!used.some((t) => t.row === row && x0 < t.x1 + 4 && t.x0 < x1 + 4)) {
				used.push({ row, x0, x1 });
				return row;
			}
		return 0;
	});
}

/** A time axis turned into steps, for runs laid over each other by step:
 * marks, [{step, t}] (a step:N mark, at t, ends step N), sorted by t;
 * beginT: when step 1 began (or null). Returns t -> x, x = N at step N's
 * mark, linear between marks (step N runs from N - 1 to N); before the
 * first mark and after the last, the nearest step's pace, no further
 * than one step out. null with no mark. Needs no DOM. */
export function stepAxis(marks, beginT) {
	const pts = marks.filter((m) => Number.isFinite(m.t) && Number.isFinite(m.step));
	if (!pts.length) return null;
	if (Number.isFinite(beginT) && beginT < pts[0].t && pts[0].step === 1) pts.unshift({ step: 0, t: beginT });
	const pace = (a, b) => (b.t > a.t ? (b.step - a.step) / (b.t - a.t) : 0);
	const first = pts.length > 1 ? pace(pts[0], pts[1]) : 0, last = pts.length > 1 ? pace(pts[pts.length - 2], pts[pts.length - 1]) : 0;
	return (t) => {
		if (t <= pts[0].t) return Math.max(pts[0].step - 1, pts[0].step - (pts[0].t - t) * first);
		const end = pts[pts.length - 1];
		if (t >= end.t) return Math.min(end.step + 1, end.step + (t - end.t) * last);
		let lo = 0, hi = pts.length - 1;
		while (hi - lo > 1) {
			const mid = (lo + hi) >> 1;
			if (pts[mid].t <= t) lo = mid;
			else hi = mid;
		}
		const a = pts[lo], b = pts[hi];
		return a.step + (t - a.t) * pace(a, b);
	};
}

/** Where a chart of a run from first to end opens: on the steps (from a
 * step before the first mark) where the program spent a while before
 * them (over 30% of the run) and every time of mustShow (the peak, the
 * failures; not numbers: none) lies there; else null, the whole run.
 * marks: the step marks' times, in order. */
export function stepsStart(marks, first, end, mustShow) {
	if (marks.length < 2) return null;
	const from = Math.max(first, marks[0] - (marks[1] - marks[0]));
	return from - first > (end - first) * 0.3 && mustShow.every((t) => !isNum(t) || t >= from) ? from : null;
}

/** The columns to draw, in the order of the device's memory events: each
 * moment's stretch of them [x0, x1) (first_event, and on by its events),
 * its bands (indices into bands, oldest first: stacked from the bottom,
 * y0..y1 in bytes) and above them the rest of what was alive (rest).
 * Needs no DOM. */
export function liveColumns(moments, bands) {
	const ms = objs(moments).filter((m) => isNum(m.first_event) && isNum(m.events) && isNum(m.from) && isNum(m.to) && isNum(m.live_bytes))
		.sort((a, b) => a.first_event - b.first_event);
	return ms.map((m) => {
		const ids = (Array.isArray(m.largest) ? m.largest : []).filter((k) => Number.isInteger(k) && obj(bands[k]) && isNum(bands[k].bytes));
		ids.sort((a, b) => (bands[a].t - bands[b].t) || a - b);
		let y = 0;
		const stack = ids.map((k) => ({ band: k, y0: y, y1: (y += bands[k].bytes) }));
		return { m, x0: m.first_event, x1: m.first_event + Math.max(1, m.events), stack, rest: { y0: y, y1: Math.max(y, m.live_bytes) } };
	});
}

/** The columns' axis of events against time: at(t), the event position of
 * time t (inside a column, linear from its first event's time to its
 * last's; between two columns, the boundary; before the first and after
 * the last, the ends); time(x), the other way. null without columns.
 * Needs no DOM. */
export function eventAxis(columns) {
	if (!columns.length) return null;
	const last = columns[columns.length - 1];
	const find = (key, v) => {
		let lo = 0, hi = columns.length - 1;
		while (lo < hi) {
			const mid = (lo + hi + 1) >> 1;
			if (key(columns[mid]) <= v) lo = mid;
			else hi = mid - 1;
		}
		return columns[lo];
	};
	return {
		at(t) {
			if (t <= columns[0].m.from) return columns[0].x0;
			if (t >= last.m.to) return last.x1;
			const c = find((k) => k.m.from, t);
			return t >= c.m.to ? c.x1 : c.x0 + ((t - c.m.from) / (c.m.to - c.m.from || 1)) * (c.x1 - c.x0);
		},
		time(x) {
			const c = find((k) => k.x0, x);
			return c.m.from + (Math.min(1, Math.max(0, (x - c.x0) / (c.x1 - c.x0))) * (c.m.to - c.m.from));
		},
	};
}

/** The moment to show first: the one that holds the most (the peak's). */
export const mostLive = (columns) => columns.reduce((best, c, i) => (best < 0 || c.m.bytes > columns[best].m.bytes ? i : best), -1);
