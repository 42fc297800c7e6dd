/* Live memory per allocation (a device's moments and bands, analyze's
 * SCHEMA.md "Moments"): at each moment of the run, the most live in its
 * stretch of time, its largest allocations as bands stacked in the order
 * they were made and the smaller ones as one; hover a band for what it is,
 * click a moment for everything alive then, as `gpuprof analyze --at`
 * gives it. What is drawn is bounded by the moments (256 at most), not by
 * the trace. */
import { isNum, obj, objs } from "./text.js";
import { add, h, heading, muted, svg, swatch } from "./dom.js";
import { bytes, carded, orDash, pct, secs, stepText } from "./format.js";
import { axisBytes, CATEGORY_COLOR, COLOR, liveColumns, mostLive, PALETTE, stepsStart } from "./style.js";
import { hideTip, resizers, selftest, showTip } from "./sections.js";
import { categoryBar, col, table } from "./tables.js";
import { stepPoints } from "./timeline.js";

const SMALLER = "#cbd5e1";

const holderRows = (list) => objs(list).map((x) => ({ name: orDash(x.name), bytes: x.bytes, share: x.share }));

function breakdown(panel, key, col0, bands) {
	const m = col0.m;
	panel.textContent = "";
	const stretch = m.from === m.to ? "" : " (the most between " + secs(m.from) + " and " + secs(m.to) + ")";
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
	const big = col0.stack.map((s) => bands[s.band]).sort((a, b) => b.bytes - a.bytes);
	if (big.length) {
		panel.appendChild(heading("Largest allocations then"));
		panel.appendChild(table([col("bytes", "bytes", bytes, 1), col("made", "t", secs, 1), col("freed", "freed_t", (v) => (isNum(v) ? secs(v) : "never"), 1),
			col("category", "category"), col("layer", "layer"), col("line", "line")], big, false));
	}
	const segments = Array.isArray(m.segments) ? segmentsView(panel, m) : null;
	selftest.live[key] = { t: m.t, bytes: m.bytes, live_bytes: m.live_bytes, reserved: isNum(m.reserved) ? m.reserved : null, segments,
		by_category: objs(m.by_category).map((c) => [c.category, c.bytes]), by_layer: holderRows(m.by_layer).map((x) => [x.name, x.bytes]),
		by_line: Array.isArray(m.by_line) ? holderRows(m.by_line).map((x) => [x.name, x.bytes]) : null };
}

const SEGMENT_ROWS = 120;

/** PyTorch's segments then (m: a Breakdown, or an Oom: its segments and
 * by_category), one row each (largest first), as wide as its size against
 * the largest; its blocks coloured by category, the free stretches light:
 * the cache as PyTorch holds it; request: a failed one's bytes. Returns
 * what it drew: {count, bytes, used}. */
export function segmentsView(panel, m, request) {
	const segs = objs(m.segments).filter((g) => isNum(g.bytes) && g.bytes > 0).sort((a, b) => b.bytes - a.bytes);
	const total = segs.reduce((a, g) => a + g.bytes, 0), used = segs.reduce((a, g) => a + (isNum(g.used) ? g.used : 0), 0);
	const widest = Math.max(0, ...segs.map((g) => (isNum(g.largest_free) ? g.largest_free : 0)));
	panel.appendChild(heading("PyTorch's segments then"));
	panel.appendChild(muted(segs.length + " segments, " + bytes(total) + " reserved" + (isNum(m.reserved) && m.reserved !== total ? " (the data says " + bytes(m.reserved) + ")" : "") +
		"; " + bytes(used) + " in blocks, " + bytes(total - used) + " free in them, the largest free stretch in one segment " + bytes(widest) +
		(isNum(request) ? ". The request, " + bytes(request) + ", " + (request > widest ? "fits in none of them: PyTorch needed a new segment of it, and the device had no room" :
			"fits in a free stretch") : ": a request larger than that needs a new segment") + ". Largest first; a block's colour is its category."));
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

function bandLines(b, m) {
	return [bytes(b.bytes) + (b.category ? " · " + b.category : "") + (b.what ? " (" + b.what + ")" : ""),
		"layer: " + orDash(b.layer), "line: " + orDash(b.line),
		"made at " + secs(b.t) + ", " + (isNum(b.freed_t) ? "freed at " + secs(b.freed_t) : "never freed"),
		"at " + secs(m.t) + ": " + pct(m.live_bytes > 0 ? b.bytes / m.live_bytes : null) + " of what was alive"];
}

export function liveSection(sec, dev, key) {
	const bands = Array.isArray(dev.bands) ? dev.bands : [];
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
	const first = columns[0].x0, t1 = Math.max(...columns.map((c) => c.x1));
	const top = Math.max(1, ...columns.map((c) => c.rest.y1));
	// as memory over time: on the steps where a program spent a while
	// before them, unless the peak or a failure lies there
	const marks = stepPoints(dev, (x) => isNum(x.t)).map((x) => x.t).sort((a, b) => a - b);
	const from = stepsStart(marks, first, t1, [obj(dev.peak) && dev.peak.t, ...objs(dev.ooms).filter(carded).map((o) => o.t)]);
	const onSteps = from !== null;
	let t0 = onSteps ? from : first;
	const box = sec.appendChild(h("div", { class: "live" }));
	const panel = h("div", { class: "live-breakdown" });
	add(sec, [muted("Each column is a stretch of the run at the moment it held the most; its largest allocations are bands, oldest at the bottom, the rest grey. Hover a band; click a column for everything alive then."),
		h("div", { class: "keys" }, ...(cuda ? [] : [h("button", { type: "button", on: { click: () => { by = "category"; draw(); } } }, "colour by category"),
			h("button", { type: "button", on: { click: () => { by = "layer"; draw(); } } }, "colour by layer")]),
		swatch(SMALLER), "smaller allocations",
		onSteps ? h("button", { type: "button", on: { click: () => { t0 = t0 === first ? from : first; draw(); } } }, "the whole run / the steps") : null),
		onSteps ? h("p", { class: "notice" }, "Opens on the steps, from " + secs(from) + " (the whole run: the button). Each column is at least " +
			secs(columns[0].m.to - columns[0].m.from) + " wide: the run's moments are at most 256.") : null]);
	sec.appendChild(box);
	sec.appendChild(panel);
	function draw() {
		const W = Math.max(320, (box.clientWidth || sec.clientWidth || 1000)), H = 240, L = 70, B = 22;
		const x = (t) => L + ((t - t0) / (t1 - t0 || 1)) * (W - L - 8), y = (v) => H - B - (v / top) * (H - B - 8);
		const g = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", "aria-label": "live memory per allocation" });
		for (let k = 0; k <= 4; k++) {
			const v = (top * k) / 4;
			g.appendChild(svg("text", { x: L - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, axisBytes(v)));
			g.appendChild(svg("text", { x: x(t0 + ((t1 - t0) * k) / 4), y: H - 6, "text-anchor": "middle", class: "axis" }, secs(t0 + ((t1 - t0) * k) / 4)));
		}
		columns.forEach((c, i) => {
			if (c.x1 <= t0) return;
			const x0 = x(Math.max(t0, c.x0)), w = Math.max(1, x(c.x1) - x0);
			const hit = svg("rect", { x: x0, y: 8, width: w, height: H - B - 8, fill: i === chosen ? "rgba(17,24,39,0.06)" : "transparent" });
			g.appendChild(hit);
			for (const s of c.stack) {
				const b = bands[s.band];
				const r = svg("rect", { x: x0, y: y(s.y1), width: w, height: Math.max(0.5, y(s.y0) - y(s.y1)), fill: colorOf(b), stroke: "#fff", "stroke-width": 0.3 });
				r.addEventListener("mousemove", (ev) => showTip(ev, bandLines(b, c.m)));
				r.addEventListener("mouseleave", hideTip);
				g.appendChild(r);
			}
			if (c.rest.y1 > c.rest.y0) {
				const r = svg("rect", { x: x0, y: y(c.rest.y1), width: w, height: y(c.rest.y0) - y(c.rest.y1), fill: SMALLER });
				r.addEventListener("mousemove", (ev) => showTip(ev, ["smaller allocations: " + bytes(c.rest.y1 - c.rest.y0), "at " + secs(c.m.t)]));
				r.addEventListener("mouseleave", hideTip);
				g.appendChild(r);
			}
		});
		g.addEventListener("click", (ev) => {
			const rect = g.getBoundingClientRect(), t = t0 + ((ev.clientX - rect.left - L) / (W - L - 8)) * (t1 - t0);
			const i = columns.findIndex((c) => t < c.x1);
			chosen = i < 0 ? columns.length - 1 : i;
			draw();
			breakdown(panel, key, columns[chosen], bands);
		});
		box.textContent = "";
		box.appendChild(g);
	}
	draw();
	breakdown(panel, key, columns[chosen], bands);
	resizers.push(draw);
	selftest.charts.push({ id: key + "-live", kind: "live", series: columns.length });
}
