/* Two runs (--base): compare's verdict per GPU and their steps side by side. */
import { arr, isNum, obj, objs } from "./text.js";
import { add, bulleted, h, heading, muted, verdict } from "./dom.js";
import { bytes, int, orDash, phaseLabel, signed, size } from "./format.js";
import { COLOR, stepAxis } from "./style.js";
import { guard, section } from "./sections.js";
import { col, facts, findDev, table } from "./tables.js";
import { plot } from "./plot.js";
import { stepPoints } from "./timeline.js";

/* --- two runs --- */

export function compareSection(sec, data) {
	const cmp = data.compare, base = obj(data.base) || {};
	const lim = obj(cmp.limit) || {};
	const limit = [isNum(lim.percent) && lim.percent + "% of BASE's peak", size(lim.bytes)].filter(Boolean).join(" and ");
	sec.appendChild(verdict(cmp.verdict === "ok", "Verdict: " + orDash(cmp.verdict) + " (metric " + orDash(cmp.metric) +
		(limit ? "; an increase fails when over " + limit : "") + ")"));
	const inputs = (s) => arr(obj(s) && s.inputs).join(", ") || "–";
	sec.appendChild(facts([["BASE", inputs(cmp.base)], ["NEW", inputs(cmp.new)]]));
	const change = col("change", "change", (v) => h("span", { class: v > 0 ? "grew" : v < 0 ? "shrank" : null }, signed(v)), 1);
	const changeCols = (first) => [col(first, "name"), col("BASE", "base", bytes, 1), col("NEW", "new", bytes, 1), change];
	const each = (key) => col(key.toUpperCase() + " each", key, (v, r) => (isNum(v) ? bytes(v) : isNum(r[key + "_at_most"]) ? "≤ " + bytes(r[key + "_at_most"]) : "–"), 1);
	objs(cmp.pairs).forEach((pair, i) => section(sec, "cmp" + i, "GPU " + orDash(pair.device) + ": " + orDash(pair.verdict), (box) => {
		const b = obj(pair.base), n = obj(pair.new);
		const side = (s) => (s ? bytes(s.value) + " · process " + orDash(s.pid) + " · " + orDash(s.cmdline) : "absent");
		box.appendChild(facts([
			["what", orDash(pair.what)], ["BASE", side(b)], ["NEW", side(n)],
			["change", isNum(pair.change) ? signed(pair.change) + (isNum(pair.change_percent) ? " (" + (pair.change_percent > 0 ? "+" : "") + pair.change_percent.toFixed(2) + "%)" : "") +
				(isNum(pair.allowed) ? ", allowed " + bytes(pair.allowed) : "") : undefined],
			["matched by", pair.matched_by || undefined],
		]));
		guard(box, "cmp" + i + "-aligned", () => pairTimelines(box, "cmp" + i + "-aligned", findDev(base, b), findDev(data.run, n)));
		guard(box, "cmp" + i + "-steps", () => pairSteps(box, "cmp" + i + "-steps", findDev(base, b), findDev(data.run, n)));
		if (objs(pair.categories).length) add(box, [heading("What grew, by category"), table(changeCols("category"), objs(pair.categories), true)]);
		if (objs(pair.layers).length) add(box, [heading("By layer (each layer's own bytes)"), table(changeCols("layer"), objs(pair.layers), true)]);
		if (objs(pair.allocations).length)
			add(box, [heading("Allocations matched across the runs"), table([col("layer", "layer"), col("category", "category"), col("phase", (r) => phaseLabel(r.phase)),
				col("what / API", (r) => r.what || r.api), col("count", "count", int, 1), each("base"), each("new"),
				col("change", "change", (v, r) => (r.exact === false ? "≥ " : "") + signed(v), 1)], objs(pair.allocations), true)]);
		if (arr(pair.notes).length) box.appendChild(bulleted(arr(pair.notes)));
	}, 3));
	if (arr(cmp.notes).length) sec.appendChild(bulleted(arr(cmp.notes)));
}

/** A device's memory over time (its timeline's most per bucket of the
 * peak's kind) on a step axis: [[x, bytes]], or null without steps. */
function overSteps(dev) {
	const tl = obj(dev && dev.timeline), kind = obj(dev && dev.peak) && dev.peak.what === "reserved" ? "reserved" : "allocated";
	const part = tl && obj(tl[kind]);
	const marks = stepPoints(dev, (s) => isNum(s.t)).sort((x, y) => x.t - y.t);
	const axis = stepAxis(marks, obj(dev.steps) ? dev.steps.begin_t : null);
	if (!part || !axis || !isNum(tl.n) || !isNum(tl.dt)) return null;
	const max = arr(part.max), t0 = isNum(tl.t0) ? tl.t0 : 0;
	return max.map((v, i) => [axis(t0 + (i + 0.5) * tl.dt), v]).filter(([x, v]) => isNum(x) && isNum(v));
}

/** BASE's and NEW's memory over time laid over each other by step: each
 * run's time turned into steps (step N ends at its mark), so that step 5
 * of one is over step 5 of the other whatever their pace; the most of
 * each in cells of a shared grid. */
function pairTimelines(box, id, baseDev, newDev) {
	const b = overSteps(baseDev), n = overSteps(newDev);
	if (!b || !n || !b.length || !n.length) return box.appendChild(muted("No memory over time with steps in " + (b ? "NEW" : "BASE") + ": the runs are not laid over each other."));
	// whole steps at the ends: the axis' ticks fall on step marks
	const xs = b.concat(n).map((p) => p[0]), lo = Math.floor(Math.min(...xs)), hi = Math.ceil(Math.max(...xs));
	const CELLS = 1500, width = (hi - lo) / CELLS || 1;
	const grid = Array.from({ length: CELLS + 1 }, (_, i) => lo + i * width);
	const cells = (pts) => {
		const out = new Array(CELLS + 1).fill(null);
		for (const [x, v] of pts) {
			const k = Math.min(CELLS, Math.max(0, Math.round((x - lo) / width)));
			if (out[k] === null || v > out[k]) out[k] = v;
		}
		return out;
	};
	box.appendChild(heading("Memory over time, the two runs laid over each other by step"));
	plot(box, { id, kind: "aligned", xKind: "step", height: 260, data: [grid, cells(n), cells(b)], series: [
		{ label: "NEW", stroke: COLOR.allocated, width: 1.5 }, { label: "BASE", stroke: "#111827", dash: [5, 5], width: 1 }] });
	box.appendChild(muted("Each run's time is counted in its own steps (step N ends at its step:N mark), so that the same step of both is at the same place whatever their pace."));
}

/** Live bytes per step of BASE and NEW on one chart. */
function pairSteps(box, id, baseDev, newDev) {
	const b = stepPoints(baseDev, (s) => isNum(s.live)), n = stepPoints(newDev, (s) => isNum(s.live));
	if (b.length + n.length < 2) return box.appendChild(muted("No steps marked in " + (b.length ? "NEW" : n.length ? "BASE" : "either run") + ": no per-step picture."));
	const steps = Array.from(new Set(b.concat(n).map((s) => s.step))).sort((x, y) => x - y);
	const at = (list) => { const m = new Map(list.map((s) => [s.step, s.live])); return steps.map((k) => (m.has(k) ? m.get(k) : null)); };
	box.appendChild(heading("Live at each step mark"));
	// BASE dashed, over NEW, so that where they are equal both show
	plot(box, { id, kind: "steps", xKind: "step", height: 240, fit: true, data: [steps, at(n), at(b)], series: [
		{ label: "NEW", stroke: COLOR.allocated, width: 2 }, { label: "BASE", stroke: "#111827", dash: [5, 5] }] });
}
