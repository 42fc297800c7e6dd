/* A device's memory over time (its timeline's buckets) and per step. */
import { arr, isNum, obj, objs, safe } from "./text.js";
import { h, muted } from "./dom.js";
import { bytes, carded, duration, secs, stepText } from "./format.js";
import { COLOR, PHASE_RGB, phaseColor, phaseKey, stepsStart, withAlpha } from "./style.js";
import { selftest } from "./sections.js";
import { dot, hmark, keyRow, markLabels, paint, plot, vmark } from "./plot.js";

/* --- timeline --- */

/** Time axis: each bucket's start (10^6 at most), the last one's end, and
 * a later failed allocation; past the buckets a column holds its last. */
export function axisOf(dev) {
	const tl = dev.timeline;
	const n = Math.min(1e6, Math.max(0, Math.floor(isNum(tl.n) ? tl.n : 0)));
	const t0 = isNum(tl.t0) ? tl.t0 : 0, dt = isNum(tl.dt) && tl.dt > 0 ? tl.dt : 1;
	const xs = Array.from({ length: n + 1 }, (_, i) => t0 + i * dt);
	const last = Math.max(...objs(dev.ooms).map((o) => (isNum(o.t) ? o.t : 0)));
	if (n && last > xs[n]) xs.push(last);
	const at = (v, i) => (isNum(arr(v)[i]) ? v[i] : null);
	return { n, t0, dt, xs, column: (v) => xs.map((_, i) => at(v, Math.min(i, n - 1))) };
}


/** The step running at time x: a step:N mark ends step N (where every
 * mark is kept: stride 1; else only the marks around x are known); step 1
 * begins at info.begin_t; after the last mark, the step that began there
 * (info.unfinished) or the program's tail. As analyze defines it. */
function stepAt(steps, stride, x, info) {
	const next = steps.findIndex((s) => s.t > x);
	if (next < 0) {
		if (!steps.length) return null;
		const last = steps[steps.length - 1].step;
		return info.unfinished ? stepText(last + 1, "in") : stepText(last, "after");
	}
	if (steps[next].step === 1 && isNum(info.begin_t) && x < info.begin_t) return stepText(1, "before");
	return stride === 1 ? stepText(steps[next].step, "in") : stepText(steps[next].step, "before");
}

export function timelineChart(parent, dev, key) {
	const tl = dev.timeline;
	const { n, t0, dt, xs, column } = axisOf(dev);
	if (!n) return parent.appendChild(muted("The timeline has no buckets."));
	const data = [xs], series = [], bands = [];
	// an amount: its most per bucket as the line; its least, where given,
	// as a lighter line with the band between them
	const amount = (part, name, color, dash) => {
		if (!obj(part)) return;
		const both = Array.isArray(part.min);
		data.push(column(part.max));
		series.push({ label: name + (both ? " (max)" : ""), stroke: color, width: dash ? 1 : 1.5, dash });
		if (!both) return;
		data.push(column(part.min));
		series.push({ label: name + " (min)", stroke: withAlpha(color, 0.45), width: 1 });
		bands.push({ series: [data.length - 2, data.length - 1], fill: withAlpha(color, 0.16) });
	};
	amount(tl.allocated, "allocated", COLOR.allocated);
	amount(tl.reserved, "reserved", COLOR.reserved);
	amount(tl.other, "other libraries", COLOR.other);
	// all the process's device memory: one dashed line, its least would clutter
	if (obj(tl.device)) amount({ max: tl.device.max }, "device total", COLOR.device, [5, 3]);
	const names = arr(tl.phases), phase = arr(tl.phase);
	const steps = stepPoints(dev, (s) => isNum(s.t)).sort((a, b) => a.t - b.t);
	const stride = obj(dev.steps) && isNum(dev.steps.stride) ? dev.steps.stride : 1;
	const stepInfo = obj(dev.steps) ? dev.steps : {};
	const peak = obj(dev.peak);
	// only the failures that get a card: those got past inside a
	// library are counted in the section, not marked here
	const cards = objs(dev.ooms).filter(carded);
	const ooms = cards.filter((o) => isNum(o.t)).sort((a, b) => a.t - b.t);
	let labelsNoted = false;
	const capacity = isNum(dev.capacity) ? dev.capacity : null;
	let wholeDevice = false;
	const controls = parent.appendChild(h("div", { class: "controls" }));
	const info = h("div", { class: "hover-info" }, " ");

	const drawBehind = (u) => {
		paint(u, (ctx, r, box) => {
			ctx.beginPath();
			ctx.rect(box.left, box.top, box.width, box.height);
			ctx.clip();
			// a rectangle per run of buckets in one phase
			for (let i = 0, j; i < n && phase.length; i = j + 1) {
				for (j = i; j + 1 < n && phase[j + 1] === phase[i]; ) j++;
				const color = phaseColor(names[phase[i]], 0.11);
				const x0 = u.valToPos(t0 + i * dt, "x", true), x1 = u.valToPos(t0 + (j + 1) * dt, "x", true);
				if (!color || x1 < box.left || x0 > box.left + box.width) continue;
				ctx.fillStyle = color;
				ctx.fillRect(x0, box.top, Math.max(1, x1 - x0), box.height);
			}
		});
		// step marks, numbered where there is room
		let last = -Infinity;
		for (const s of steps) {
			const px = u.valToPos(s.t, "x", true);
			const room = px - last > 34 * (u.bbox.width / Math.max(1, u.over.clientWidth));
			vmark(u, s.t, COLOR.step, [2, 3], room ? String(s.step) : null, 0);
			if (room) last = px;
		}
	};
	const drawMarks = (u) => {
		if (capacity !== null) hmark(u, capacity, "#b91c1c", "capacity " + bytes(capacity));
		// numbered as the cards of the section are
		const texts = ooms.map((o) => "OOM" + (cards.length > 1 ? " " + (cards.indexOf(o) + 1) : "") + ": " + bytes(o.request));
		const peakMark = peak && isNum(peak.t) && isNum(peak.bytes) ? { x: peak.t, y: peak.bytes, text: "peak " + bytes(peak.bytes) } : null;
		// rows of text that never overlap (each other, nor the peak's);
		// a mark with no room keeps its line, its text left out
		const placed = markLabels(u, ooms.map((o, i) => ({ x: o.t, text: texts[i] })), peakMark);
		ooms.forEach((o, i) => {
			const text = texts[i], { row, x0, x1 } = placed[i];
			vmark(u, o.t, COLOR.bad, [4, 3], row ? text : null, row);
			if (!labelsNoted) selftest.labels.push({ chart: key + "-timeline", text, row, x0: Math.round(x0), x1: Math.round(x1) });
			// the request stacked on what the process held: how far over it went
			const held = isNum(o.device_total) ? o.device_total : o.allocated;
			if (isNum(held) && isNum(o.request)) vmark(u, o.t, COLOR.bad, [], null, 0, held, held + o.request);
		});
		labelsNoted = true;
		if (peak && isNum(peak.t) && isNum(peak.bytes)) dot(u, peak.t, peak.bytes, COLOR.peak, "peak " + bytes(peak.bytes));
	};
	const onCursor = (u) => {
		const i = u.cursor.idx;
		const name = i == null ? null : names[phase[i]];
		info.textContent = i == null ? " " : safe([secs(xs[i]), stepAt(steps, stride, xs[i], stepInfo), name !== "none" && name].filter(Boolean).join(" · "));
	};
	const u = plot(parent, {
		id: key + "-timeline", kind: "timeline", data, series, bands, sync: key,
		yMax: () => Math.max(wholeDevice ? capacity : 0, peak && isNum(peak.bytes) ? peak.bytes : 0),
		hooks: { drawClear: [drawBehind], draw: [drawMarks], setCursor: [onCursor] },
	});
	parent.appendChild(info);
	// what the chart opens on, against the run (the tests: the whole run),
	// once uPlot has set its scales (a microtask of its own, queued before)
	queueMicrotask(() => selftest.views.push({ id: key + "-timeline", shown: [u.scales.x.min, u.scales.x.max], run: [xs[0], xs[xs.length - 1]],
		left_out: leftOut, peak_t: peak && isNum(peak.t) ? peak.t : null }));
	parent.appendChild(keyRow(Object.keys(PHASE_RGB).filter((p) => names.map(phaseKey).includes(p)).map((p) => [phaseColor(p, 0.2), p.replace("_", " ")]).concat([
		steps.length && [COLOR.step, "step marks (the end of step N" + (stride > 1 ? "; 1 in " + stride + " kept" : "") + ")", "line"],
		peak && isNum(peak.t) && [COLOR.peak, "the peak", "dot"], ooms.length && [COLOR.bad, "failed allocation (bar: its request on what was held)", "line"]].filter(Boolean))));
	if (capacity !== null) {
		const box = h("input", { type: "checkbox" });
		box.addEventListener("change", () => {
			wholeDevice = box.checked;
			// setting x again makes uPlot range y anew, through yMax
			u.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
		});
		controls.appendChild(h("label", null, box, " show the whole device (" + bytes(capacity) + ")"));
	}
	let leftOut = null;
	// a program may import for seconds before its first step: then the
	// chart opens on the steps, saying what it leaves out, unless the peak
	// or a failure lies there (it opens on the whole run)
	const end = xs[xs.length - 1];
	const from = stepsStart(steps.map((x) => x.t), xs[0], end, [peak && peak.t, ...ooms.map((o) => o.t)]);
	if (from !== null) {
		const kind = obj(tl.allocated) ? tl.allocated : obj(tl.reserved) ? tl.reserved : null;
		const before = kind ? arr(kind.max).slice(0, Math.max(0, Math.floor((from - t0) / dt))).filter(isNum) : [];
		leftOut = { from, max: before.length ? Math.max(...before) : null };
		const toSteps = () => u.setScale("x", { min: from, max: end });
		const whole = () => u.setScale("x", { min: xs[0], max: end });
		controls.appendChild(h("button", { type: "button", on: { click: whole } }, "the whole run"));
		controls.appendChild(h("button", { type: "button", on: { click: toSteps } }, "the steps"));
		parent.insertBefore(h("p", { class: "notice" }, "Opens on the steps, from " + secs(from) + ": the " + secs(from - xs[0]) +
			" before them are left out" + (leftOut.max !== null ? " (the most allocated there: " + bytes(leftOut.max) + ", below the peak)" : "") +
			". “The whole run” or a double-click shows them."), controls.nextSibling);
		toSteps();
	}
	controls.appendChild(h("span", { class: "muted hint" }, "drag: zoom · Shift+drag: pan · double-click: all · per bucket of " + duration(dt) + ": the most (line) and least (band)"));
}

/** steps.series's points with a step and what has(s). */
export const stepPoints = (dev, has) => objs(dev && obj(dev.steps) && dev.steps.series).filter((s) => isNum(s.step) && has(s));
export const stepColumn = (pts, key) => pts.map((s) => (isNum(s[key]) ? s[key] : null));

/** Without a timeline (a summary): steps.series. */
export function stepsChart(parent, id, dev) {
	const pts = stepPoints(dev, () => true);
	if (pts.length < 2) return parent.appendChild(muted("Fewer than 2 step marks: nothing to draw."));
	const data = [pts.map((s) => s.step), stepColumn(pts, "live")];
	const series = [{ label: "live at the step mark", stroke: COLOR.allocated }];
	for (const [key, label, stroke, dash] of [["reserved", "reserved", COLOR.reserved], ["total", "device total", COLOR.device, [5, 3]]])
		if (pts.some((s) => isNum(s[key]))) {
			data.push(stepColumn(pts, key));
			series.push({ label, stroke, dash });
		}
	plot(parent, { id, kind: "steps", xKind: "step", data, series, height: 260 });
}
