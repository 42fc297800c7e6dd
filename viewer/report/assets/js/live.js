/* Live memory per allocation (a device's moments and bands, analyze's
 * SCHEMA.md "Moments"): at each moment of the run, the most live in its
 * stretch of memory events, its largest allocations as bands stacked in the order
 * they were made and the smaller ones as one; hover a band for what it is,
 * click a moment for everything alive then, as `gpuprof analyze --at`
 * gives it. Laid out by the device's memory events, as memory_viz does;
 * what is drawn is bounded by the moments (256 at most), not by the
 * trace. */
import { isNum, obj, objs } from "./text.js";
import { add, h, heading, muted, svg, swatch } from "./dom.js";
import { bytes, orDash, pct, secs, stepText } from "./format.js";
import { axisBytes, CATEGORY_COLOR, COLOR, eventAxis, layoutLabels, liveColumns, mostLive, PALETTE } from "./style.js";
import { hideTip, resizers, selftest, selftestChanged, showTip } from "./sections.js";
import { categoryBar, col, table } from "./tables.js";
import { stepPoints } from "./timeline.js";

const SMALLER = "#cbd5e1";
// rows of the largest allocations shown before the rest are folded
const LARGEST_ROWS = 8;

const holderRows = (list) => objs(list).map((x) => ({ name: orDash(x.name), bytes: x.bytes, share: x.share }));

function breakdown(panel, key, col0, bands, stacks, expandable) {
	const m = col0.m;
	panel.textContent = "";
	const stretch = m.events > 1 ? " (the most of memory events " + (m.first_event + 1) + " to " + (m.first_event + m.events) + ", " + secs(m.from) + " to " + secs(m.to) + ")" : "";
	add(panel, [h("p", { class: "verdict good" }, "At " + m.t.toFixed(9) + " s" + stretch + ": " + bytes(m.bytes) + " live" +
		[stepText(m.step, m.step_when), m.phase !== "none" && m.phase].filter(Boolean).map((x) => ", " + x).join("")),
		muted("Device memory alive then: " + bytes(m.live_bytes) + " in " + orDash(m.live_allocations) + " allocations. The same as gpuprof analyze --at " + m.t.toFixed(9) + ".")]);
	if (objs(m.by_category).length) {
		panel.appendChild(heading("By category"));
		categoryBar(panel, key + "-live-cat", m);
	}
	panel.appendChild(heading("By layer (innermost)"));
	panel.appendChild(table([col("layer", "name"), col("bytes", "bytes", bytes, 1), col("share", "share", pct, 1)], holderRows(m.by_layer), false));
	if (Array.isArray(m.by_line)) {
		panel.appendChild(heading("By source line"));
		panel.appendChild(table([col("line", "name"), col("bytes", "bytes", bytes, 1), col("share", "share", pct, 1)], holderRows(m.by_line), false));
	}
	const order = col0.stack.map((s) => s.band).sort((a, b) => bands[b].bytes - bands[a].bytes), big = order.map((k) => bands[k]);
	if (big.length) {
		const cols = [col("bytes", "bytes", bytes, 1), col("made", "t", secs, 1), col("freed", "freed_t", (v) => (isNum(v) ? secs(v) : "never"), 1),
			col("category", "category"), col("layer", "layer"), col("line", "line")];
		add(panel, [heading("Largest allocations then"), table(cols, big.slice(0, LARGEST_ROWS), true)]);
		if (big.length > LARGEST_ROWS)
			panel.appendChild(h("details", null, h("summary", null, "The next " + (big.length - LARGEST_ROWS) + " of the bands"), table(cols, big.slice(LARGEST_ROWS), true)));
	}
	const segments = Array.isArray(m.segments) ? segmentsView(panel, m, null, expandable) : null;
	if (!segments && isNum(m.reserved))
		add(panel, [heading("PyTorch's segments then"), muted(bytes(m.reserved) + " reserved; their layout is left out at this moment to keep the page small " +
			"(the moment that holds the most has all of its own; analyze's SCHEMA.md, \"Moments\"). gpuprof analyze --at " + m.t.toFixed(9) + " lists them.")]);
	// what hovering the largest band says
	const tip = order.length ? { t: bands[order[0]].t, bytes: bands[order[0]].bytes, lines: bandLines(bands[order[0]], m, stacks[order[0]]) } : null;
	selftest.live[key] = { t: m.t, bytes: m.bytes, live_bytes: m.live_bytes, reserved: isNum(m.reserved) ? m.reserved : null, segments, tip,
		by_category: objs(m.by_category).map((c) => [c.category, c.bytes]), by_layer: holderRows(m.by_layer).map((x) => [x.name, x.bytes]),
		by_line: Array.isArray(m.by_line) ? holderRows(m.by_line).map((x) => [x.name, x.bytes]) : null };
}

const SEGMENT_ROWS = 120;

/** Whether the device's PyTorch had expandable segments (its segments are
 * then runs of pages it mapped, grown at their end). */
export const expandableSegments = (dev) => {
	const f = obj(dev) && obj(dev.summary) && obj(dev.summary.cache) && obj(dev.summary.cache.fragmentation);
	return !!(f && f.expandable_segments === true);
};

/** PyTorch's segments then (m: a Breakdown, or an Oom: its segments and
 * by_category), one row each (largest first), as wide as its size against
 * the largest; its blocks coloured by category, the free stretches light:
 * the cache as PyTorch holds it; request: a failed one's bytes;
 * expandable: PyTorch's expandable segments (a row a run of mapped
 * pages). Returns what it drew: {count, bytes, used}. */
export function segmentsView(panel, m, request, expandable) {
	const segs = objs(m.segments).filter((g) => isNum(g.bytes) && g.bytes > 0).sort((a, b) => b.bytes - a.bytes);
	const total = segs.reduce((a, g) => a + g.bytes, 0), used = segs.reduce((a, g) => a + (isNum(g.used) ? g.used : 0), 0);
	const widest = Math.max(0, ...segs.map((g) => (isNum(g.largest_free) ? g.largest_free : 0)));
	const unit = expandable ? "run of mapped pages" : "segment";
	const grow = expandable ? "PyTorch had to map pages for it at a segment's end" : "PyTorch needed a new segment of it";
	panel.appendChild(heading("PyTorch's segments then"));
	panel.appendChild(muted((expandable ? "Expandable segments: a row is a run of pages PyTorch mapped one after another. " : "") +
		segs.length + " " + (expandable ? (segs.length === 1 ? "run" : "runs") + " of mapped pages" : segs.length === 1 ? "segment" : "segments") + ", " + bytes(total) + " reserved" + (isNum(m.reserved) && m.reserved !== total ? " (the data says " + bytes(m.reserved) + ")" : "") +
		"; " + bytes(used) + " in blocks, " + bytes(total - used) + " free in them, the largest free stretch in one " + unit + " " + bytes(widest) +
		(isNum(request) ? ". The request, " + bytes(request) + ", " + (request > widest ? "fits in none of them: " + grow + ", and the device had no room" :
			"fits in a free stretch") : ": a larger request needs " + (expandable ? "pages mapped for it" : "a new segment")) + ". Largest first; a block's colour is its category."));
	const drawn = { count: segs.length, bytes: total, used };
	if (!segs.length) return drawn;
	const W = Math.max(320, (panel.clientWidth || 900) - 330), H = 12, max = segs[0].bytes, shown = segs.slice(0, SEGMENT_ROWS);
	const g = svg("svg", { width: W + 320, height: shown.length * (H + 3) + 4, role: "img", "aria-label": "segments and blocks" });
	shown.forEach((seg, row) => {
		const y = 2 + row * (H + 3), w = Math.max(4, (seg.bytes / max) * W), scale = w / seg.bytes;
		g.appendChild(svg("rect", { x: 0, y, width: w, height: H, fill: "#f1f5f9", stroke: "#94a3b8", "stroke-width": 0.5 }));
		if (Array.isArray(seg.blocks))
			for (const b of seg.blocks) {
				if (!Array.isArray(b) || !isNum(b[0]) || !isNum(b[1])) continue;
				const cat = objs(m.by_category)[b[2]];
				g.appendChild(svg("rect", { x: b[0] * scale, y, width: Math.max(0.5, b[1] * scale), height: H,
					fill: (cat && CATEGORY_COLOR[cat.category]) || COLOR.allocated }));
			}
		else if (isNum(seg.used)) g.appendChild(svg("rect", { x: 0, y, width: seg.used * scale, height: H, fill: "#94a3b8" }));
		g.appendChild(svg("text", { x: w + 6, y: y + H - 2, class: "axis" }, bytes(seg.bytes) + " · " + bytes(seg.used) + " used · " +
			bytes(seg.largest_free) + " largest free" + (Array.isArray(seg.blocks) ? "" : " (blocks left out)")));
	});
	panel.appendChild(h("div", { class: "live segments" }, g));
	if (segs.length > shown.length) panel.appendChild(muted((segs.length - shown.length) + " smaller segments not drawn."));
	return drawn;
}

// frames of a band's stack shown on hover, past its line
const HOVER_FRAMES = 8;

function bandLines(b, m, stack) {
	const frames = Array.isArray(stack) ? stack.filter((f) => typeof f === "string") : [];
	const outer = frames.slice(1, 1 + HOVER_FRAMES).map((f) => "  called from " + f);
	if (frames.length > 1 + HOVER_FRAMES) outer.push("  ... " + (frames.length - 1 - HOVER_FRAMES) + " more frames");
	return [bytes(b.bytes) + (b.category ? " · " + b.category : "") + (b.what ? " (" + b.what + ")" : ""),
		"layer: " + orDash(b.layer), "line: " + orDash(b.line), ...outer,
		"made at " + secs(b.t) + ", " + (isNum(b.freed_t) ? "freed at " + secs(b.freed_t) : "never freed"),
		"at " + secs(m.t) + ": " + pct(m.live_bytes > 0 ? b.bytes / m.live_bytes : null) + " of what was alive"];
}

export function liveSection(sec, dev, key) {
	const bands = Array.isArray(dev.bands) ? dev.bands : [];
	const stacks = Array.isArray(dev.band_stacks) ? dev.band_stacks : [];
	const columns = liveColumns(dev.moments, bands);
	if (!columns.length) return sec.appendChild(muted("No moments: the input was a summary, or no device memory was allocated."));
	const cuda = dev.mode === "cuda";
	let by = cuda ? "layer" : "category", chosen = mostLive(columns);
	const layerColor = {};
	const colorOf = (b) => {
		if (by === "category") return CATEGORY_COLOR[b.category] || COLOR.device;
		const name = orDash(b.layer);
		if (!(name in layerColor)) layerColor[name] = PALETTE[Object.keys(layerColor).length % PALETTE.length];
		return layerColor[name];
	};
	const axis = eventAxis(columns);
	const e0 = columns[0].x0, e1 = columns[columns.length - 1].x1;
	const top = Math.max(1, ...columns.map((c) => c.rest.y1));
	const marks = stepPoints(dev, (x) => isNum(x.t)).sort((a, b) => a.t - b.t);
	const box = sec.appendChild(h("div", { class: "live" }));
	const panel = h("div", { class: "live-breakdown" });
	const per = columns[0].x1 - columns[0].x0;
	add(sec, [muted("Across: the device's memory events (allocations and frees) in order, their times under the axis, as PyTorch's memory_viz lays them out: " +
		"the steps get the room, a quiet stretch of loading little. Each column is " + per + (per === 1 ? " event" : " events") +
		" at the moment it held the most; its largest allocations are bands, oldest at the bottom, the rest grey. Hover a band; click a column for everything alive then."),
		h("div", { class: "keys" }, ...(cuda ? [] : [h("button", { type: "button", on: { click: () => { by = "category"; draw(); } } }, "colour by category"),
			h("button", { type: "button", on: { click: () => { by = "layer"; draw(); } } }, "colour by layer")]),
		swatch(SMALLER), "smaller allocations", marks.length ? swatch(COLOR.step) : null, marks.length ? "step marks" : null)]);
	sec.appendChild(box);
	sec.appendChild(panel);
	function draw() {
		const W = Math.max(320, (box.clientWidth || sec.clientWidth || 1000)), H = 256, L = 70, B = 22, T = 24;
		const x = (e) => L + ((e - e0) / (e1 - e0 || 1)) * (W - L - 8), y = (v) => H - B - (v / top) * (H - B - T);
		const g = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "live memory per allocation", "data-chart": key + "-live" });
		for (let k = 0; k <= 4; k++) {
			const v = (top * k) / 4, e = e0 + ((e1 - e0) * k) / 4;
			g.appendChild(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, axisBytes(v)));
			g.appendChild(svg("text", { x: x(e), y: H - 6, "text-anchor": k === 0 ? "start" : k === 4 ? "end" : "middle", class: "axis" }, secs(axis.time(e))));
		}
		// the bands as one path a colour (a few elements, however many
		// columns and bands: the page stays quick), a transparent rect a
		// column over them for the pointer
		const paths = new Map();
		const area = (fill, x0, y0, w, hgt) => {
			if (!paths.has(fill)) paths.set(fill, []);
			paths.get(fill).push("M" + x0.toFixed(1) + " " + y0.toFixed(1) + "h" + w.toFixed(1) + "v" + hgt.toFixed(1) + "h" + (-w).toFixed(1) + "z");
		};
		const hits = columns.map((c, i) => {
			const x0 = x(c.x0), w = Math.max(1, x(c.x1) - x0), bw = Math.max(0.6, w - 0.3);
			for (const s of c.stack) area(colorOf(bands[s.band]), x0, y(s.y1), bw, Math.max(0.4, y(s.y0) - y(s.y1) - 0.4));
			if (c.rest.y1 > c.rest.y0) area(SMALLER, x0, y(c.rest.y1), bw, y(c.rest.y0) - y(c.rest.y1));
			return svg("rect", { x: x0, y: T, width: w, height: H - B - T, fill: i === chosen ? "rgba(17,24,39,0.06)" : "transparent", "data-column": i });
		});
		for (const [fill, d] of paths) g.appendChild(svg("path", { d: d.join(""), fill }));
		// step marks: a dashed line each, 4 px apart at least; the labels that fit
		const steps = [];
		for (const s of marks) {
			const px = x(axis.at(s.t));
			if (!steps.length || px - steps[steps.length - 1].px >= 4) steps.push({ px, step: s.step });
		}
		if (steps.length)
			g.appendChild(svg("path", { d: steps.map((s) => "M" + s.px.toFixed(1) + " " + (T - 4) + "V" + (H - B)).join(""), stroke: COLOR.step, "stroke-width": 1, "stroke-dasharray": "2,2", fill: "none" }));
		const spans = steps.map((s) => [s.px, s.px + 6 * ("step " + s.step).length + 4]), rows = layoutLabels(spans, 1);
		// a label that would run past the chart's edge is left out
		steps.forEach((s, i) => rows[i] && spans[i][1] <= W + 4 && g.appendChild(svg("text", { x: s.px + 2, y: T - 8, class: "axis" }, "step " + s.step)));
		hits.forEach((r) => g.appendChild(r));
		// the tip: the band under the pointer in its column
		g.addEventListener("mousemove", (ev) => {
			const c = columns[Number((ev.target.dataset || {}).column)];
			if (!c) return hideTip();
			const v = ((H - B - (ev.clientY - g.getBoundingClientRect().top)) / (H - B - T)) * top;
			const s = c.stack.find((k) => v >= k.y0 && v < k.y1);
			if (s) return showTip(ev, bandLines(bands[s.band], c.m, stacks[s.band]));
			if (v >= c.rest.y0 && v < c.rest.y1) return showTip(ev, ["smaller allocations: " + bytes(c.rest.y1 - c.rest.y0), "at " + secs(c.m.t)]);
			hideTip();
		});
		g.addEventListener("mouseleave", hideTip);
		g.addEventListener("click", (ev) => {
			const rect = g.getBoundingClientRect(), e = e0 + ((ev.clientX - rect.left - L) / (W - L - 8)) * (e1 - e0);
			const i = columns.findIndex((c) => e < c.x1);
			chosen = i < 0 ? columns.length - 1 : i;
			draw();
			breakdown(panel, key, columns[chosen], bands, stacks, expandableSegments(dev));
			selftestChanged();
		});
		box.textContent = "";
		box.appendChild(g);
	}
	draw();
	breakdown(panel, key, columns[chosen], bands, stacks, expandableSegments(dev));
	resizers.push(draw);
	selftest.charts.push({ id: key + "-live", kind: "live", series: columns.length });
}
