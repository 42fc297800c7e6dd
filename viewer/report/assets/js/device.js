/* A device's title, its summary table and its section over time. */
import { arr, isNum, obj } from "./text.js";
import { h, muted } from "./dom.js";
import { bytes, KIND_MEANINGS, orDash, plural, secs } from "./format.js";
import { col, table } from "./tables.js";
import { stepsChart, timelineChart } from "./timeline.js";

/* --- a device --- */

export const traceOf = (dev, run) => obj(arr(run.traces)[dev.trace]) || {};
export function deviceTitle(dev, run) {
	const rank = traceOf(dev, run).rank;
	return "process " + orDash(dev.pid) + (isNum(rank) ? ", rank " + rank : "") + " · GPU " + orDash(dev.device) +
		(dev.name ? ": " + dev.name : "") + (isNum(dev.capacity) ? ", " + bytes(dev.capacity) : "");
}

/** The memory_summary() numbers, at the top of a device; the kinds of
 * memory apart from the device's (module globals, pinned host memory)
 * are rows for a CUDA program, one line below for PyTorch's users, as
 * in the text report. */
export function summaryTable(dev) {
	const s = obj(dev.summary) || {};
	const rows = [];
	const amount = (name, a) => obj(a) && a.known !== false && rows.push({ name: name + (a.source ? " (" + a.source + ")" : ""), end: a.end, peak: a.peak, t: a.peak_t });
	amount("allocated", s.allocated);
	amount("reserved", s.reserved);
	if (obj(s.other)) rows.push({ name: "other (not PyTorch)", end: s.other.end, peak: s.other.peak });
	amount("device total", s.device_total);
	const kinds = Object.entries(obj(s.kinds) || {}).filter(([, k]) => obj(k));
	if (dev.mode === "cuda") kinds.forEach(([name, k]) => rows.push({ name, end: k.end, peak: k.peak }));
	const box = h("div", { class: "summary" }, table([col("memory", "name"), col("at end", "end", bytes, 1), col("peak", "peak", bytes, 1), col("peak at", "t", secs, 1)], rows, false));
	if (dev.mode !== "cuda" && kinds.length)
		box.appendChild(muted("Not counted above: " + kinds.map(([name, k]) => {
			const what = Object.prototype.hasOwnProperty.call(KIND_MEANINGS, name) ? KIND_MEANINGS[name] + ", " : "";
			return bytes(k.peak) + " of " + name + " (" + what + plural(k.allocations, "allocation") + (k.end !== k.peak ? "; " + bytes(k.end) + " at the end" : "") + ")";
		}).join(", ")));
	return box;
}

export function timeSection(sec, dev, key) {
	if (obj(dev.timeline)) return timelineChart(sec, dev, key);
	sec.appendChild(h("p", { class: "notice" }, "No memory over time: the input was a summary, not a trace. Below: what was live at each step mark."));
	stepsChart(sec, key + "-steps", dev);
}
