/* gpuprof report's page: draws the inlined data (gpuprof.report/1: analyze's
 * JSON, analyze/SCHEMA.md, a timeline per device; with --base the base run
 * and compare's JSON) with uPlot and d3-hierarchy's partition.
 * The page's CSP allows no inline handler or style attribute, eval, network.
 * The data is untrusted (names come from the traced program): it reaches the
 * DOM only as text, control and bidi characters made visible as the text
 * report does (viewer/render/term.c). A section that throws says so in place
 * and in the self-test (pre#gpuprof-selftest); the others are still drawn. */
(function () {
	"use strict";

	/* --- text --- */

	// C0/C1 controls, DEL, bidi controls, the line and paragraph separators
	// (U+2028/9: invisible, they would hide what is between), and unpaired
	// surrogates (the u flag makes [\uD800-\uDFFF] match only those left
	// unpaired)
	const UNSAFE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028-\u202E\u2066-\u2069\uD800-\uDFFF]/gu;

	/** A value as text, what hides or reorders text escaped (\x1B, \u202E). */
	function safe(value) {
		return String(value).replace(UNSAFE, (ch) => {
			const c = ch.codePointAt(0);
			const hex = c.toString(16).toUpperCase();
			return c < 0x20 || c === 0x7f ? "\\x" + hex.padStart(2, "0") : "\\u" + hex.padStart(4, "0");
		});
	}

	const isNum = (v) => typeof v === "number" && isFinite(v);
	const arr = (v) => (Array.isArray(v) ? v : []);
	const obj = (v) => (v && typeof v === "object" && !Array.isArray(v) ? v : null);
	const objs = (v) => arr(v).filter(obj);
	const sumOf = (list, key) => list.reduce((s, x) => s + (isNum(x && x[key]) ? x[key] : 0), 0);

	/* --- DOM --- */

	/** Append children: nodes, or anything else as text. */
	function add(parent, kids) {
		for (const kid of kids.flat(Infinity))
			if (kid != null && kid !== false)
				parent.appendChild(kid instanceof Node ? kid : document.createTextNode(safe(kid)));
		return parent;
	}

	/** An element. props: class, on (listeners), style (through the CSSOM,
	 * which the CSP allows), non-URL attributes; href only to our anchors. */
	function h(tag, props, ...kids) {
		const el = document.createElement(tag);
		for (const [key, val] of Object.entries(props || {})) {
			if (val == null || val === false) continue;
			if (key === "class") el.className = val;
			else if (key === "on") for (const ev in val) el.addEventListener(ev, val[ev]);
			else if (key === "style") Object.assign(el.style, val);
			else if ((key === "href" && !/^#[a-z0-9-]+$/.test(val)) || key === "src" || /^on/i.test(key)) throw new Error("refused " + key);
			else el.setAttribute(key, val === true ? "" : safe(val));
		}
		return add(el, kids);
	}
	function svg(tag, attrs, ...kids) {
		const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
		for (const [key, val] of Object.entries(attrs || {})) el.setAttribute(key, safe(val));
		return add(el, kids);
	}
	const para = (...kids) => h("p", null, ...kids);
	const muted = (...kids) => h("p", { class: "muted" }, ...kids);
	const heading = (text) => h("h4", null, text);
	const verdict = (good, text) => h("p", { class: "verdict " + (good ? "good" : "bad") }, text);
	const swatch = (color, cls) => h("span", { class: "swatch " + (cls || ""), style: { background: color } });
	const bulleted = (list) => h("ul", { class: "notes" }, list.map((t) => h("li", null, t)));

	/* --- numbers --- */

	const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

	/** Bytes as the text report writes them (analyze/units.h): 7.25 KiB,
	 * digit for digit: a whole count is rounded as C's printf rounds it (the
	 * exact quotient, a tie to even: 1152 B is 1.12 KiB), where toFixed
	 * would round a tie up (tests/report: formatting). */
	function bytes(v) {
		if (!isNum(v)) return "–";
		const a = Math.abs(v);
		let d = a, u = 0, den = 1;
		for (; d >= 1024 && u < UNITS.length - 1; u++, den *= 1024) d /= 1024;
		const k = u === 0 ? 0 : d < 10 ? 2 : d < 100 ? 1 : 0;
		const num = Number.isSafeInteger(a) ? fixedTiesEven(a, den, k) : d.toFixed(k);
		return (v < 0 ? "−" : "") + num + " " + UNITS[u];
	}
	/** n / den (whole numbers) with k decimals, rounded to nearest, ties to even. */
	function fixedTiesEven(n, den, k) {
		const num = BigInt(n) * 10n ** BigInt(k), dd = BigInt(den);
		let q = num / dd;
		const r2 = 2n * (num % dd);
		if (r2 > dd || (r2 === dd && q % 2n === 1n)) q += 1n;
		const s = q.toString().padStart(k + 1, "0");
		return k ? s.slice(0, -k) + "." + s.slice(-k) : s;
	}
	const signed = (v) => (isNum(v) && v > 0 ? "+" : "") + bytes(v);
	const secs = (t) => (isNum(t) ? t.toFixed(3) + " s" : "–");
	const duration = (t) => (t >= 1 ? t.toPrecision(3) + " s" : t >= 1e-3 ? +(t * 1e3).toPrecision(3) + " ms" : +(t * 1e6).toPrecision(3) + " µs");
	const pct = (share) => (isNum(share) ? (share * 100).toFixed(1) + "%" : "–");
	const int = (n) => (isNum(n) ? n.toLocaleString("en-US") : "–");
	const orDash = (v) => (v == null || v === "" ? "–" : v);
	const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");
	// what the text report says of each outcome of a failed allocation
	// (analyze/result.c, gp_an_oom_outcome_words), in the schema's order
	const OOM_OUTCOMES = [["fatal", "fatal (the program did not get past it)"],
		["later_steps", "got past by the program (it completed later steps)"],
		["caught", "caught inside a library, which went on"], ["retried", "retried by the allocator, which got the memory"]];
	/** A failure that gets a card: the program did not get past it inside a
	 * library (a summary without outcomes: every one). */
	const carded = (o) => typeof o.outcome !== "string" || o.outcome === "fatal" || o.outcome === "later_steps";
	/** bytes, or undefined (a fact left out) where not known */
	const size = (v) => (isNum(v) ? bytes(v) : undefined);
	/** A phase as the text report shows it (gp_an_phase_label, viewer/analyze/result.c): the schema's
	 * "none" (made outside forward, backward, the optimizer's step and zero_grad) is "(no phase)". */
	const PHASE_LABELS = { none: "(no phase)" };
	const phaseLabel = (p) => (typeof p === "string" && Object.prototype.hasOwnProperty.call(PHASE_LABELS, p) ? PHASE_LABELS[p] : p);
	/** What each memory kind apart from the device's is (exporters/trace_format.def's GP_KIND meanings). */
	const KIND_MEANINGS = {
		device_static: "a module's device globals", managed: "managed (unified) memory", managed_static: "a module's managed globals",
		pinned_host: "page-locked host memory", pageable: "pageable host memory", array: "a CUDA array", unknown: "a kind CUPTI did not name",
	};
	/** "step 5", "before step 1", "after step 20": a step and its step_when
	 * (gpuprof.analyze/1; analyze's text says it the same way). */
	const STEP_WORD = { in: "step ", before: "before step ", after: "after step " };
	const stepText = (step, stepWhen) => (isNum(step) ? (STEP_WORD[stepWhen] || "step ") + step : null);
	/** The steps a leak's verdict compared, each with the one before it (as
	 * analyze's text counts them): grew + shrank + flat. */
	const stepsCompared = (leak) => ([leak.grew, leak.shrank, leak.flat].every(isNum) ? leak.grew + leak.shrank + leak.flat : null);
	/** "1.234 s, step 5, backward" of anything with t, step, step_when, phase; no phase ("none") is not said. */
	const when = (m) => [secs(m.t), stepText(m.step, m.step_when), m.phase !== "none" && m.phase].filter(Boolean).join(", ");

	// y ticks on powers of two (256 MiB, 512 MiB, 768 MiB, 1 GiB): decimal
	// steps would cross a unit at odd values (1000 MiB, 1.17 GiB)
	const BYTE_INCRS = Array.from({ length: 51 }, (_, i) => 2 ** i);
	const axisBytes = (v) => bytes(v).replace(/\.(\d*?)0+ /, (m, keep) => (keep ? "." + keep : "") + " ");
	const STEP_INCRS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6];

	const COLOR = {
		allocated: "#2563eb", reserved: "#ea580c", other: "#9333ea", device: "#475569", cached: "#fdba74",
		outside: "#94a3b8", free: "#e5e7eb", bad: "#dc2626", peak: "#111827", step: "rgba(71,85,105,0.5)",
	};
	const CATEGORY_COLOR = {
		parameters: "#2563eb", gradients: "#0891b2", "optimizer state": "#16a34a", activations: "#ea580c",
		temporaries: "#eab308", inputs: "#9333ea", other: "#64748b",
	};
	const PALETTE = ["#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2", "#eab308", "#db2777", "#64748b"];
	// phases; the schema says "optimizer.step", a timeline may say "optimizer"
	const PHASE_RGB = { forward: "37,99,235", backward: "234,88,12", optimizer: "22,163,74", zero_grad: "100,116,139" };
	const phaseKey = (name) => (typeof name === "string" && name.startsWith("optimizer") ? "optimizer" : name);
	const phaseColor = (name, a) => (PHASE_RGB[phaseKey(name)] ? "rgba(" + PHASE_RGB[phaseKey(name)] + "," + a + ")" : null);
	const withAlpha = (hex, a) => hex + Math.round(a * 255).toString(16).padStart(2, "0");

	/* --- self-test, sections --- */

	const selftest = { charts: [], errors: [], labels: [] };
	const resizers = [];
	const syncGroups = {};
	const noteChart = (id, kind, series) => selftest.charts.push({ id, kind, series });

	/** Run fn; an exception is shown in place and in the self-test. */
	function guard(where, id, fn) {
		try {
			fn();
		} catch (err) {
			const msg = (err && err.message) || String(err);
			selftest.errors.push(id + ": " + msg);
			where.appendChild(h("p", { class: "error" }, "This part could not be drawn: " + msg));
		}
	}
	/** A section (level 2, or 3 inside one) that build(section) fills. */
	function section(parent, id, title, build, level) {
		const sec = h("section", { id, class: level === 3 ? "sub" : "sec" }, h(level === 3 ? "h3" : "h2", null, title));
		parent.appendChild(sec);
		guard(sec, id, () => build(sec));
		return sec;
	}

	const tip = h("div", { class: "tip", role: "tooltip" });
	function showTip(ev, lines) {
		tip.textContent = "";
		lines.forEach((line, i) => tip.appendChild(h("div", { class: i ? null : "tip-head" }, line)));
		tip.style.display = "block";
		const w = tip.offsetWidth;
		const x = ev.clientX + 14 + w > window.innerWidth ? ev.clientX - 14 - w : ev.clientX + 14;
		tip.style.left = Math.max(0, x + window.scrollX) + "px";
		tip.style.top = ev.clientY + window.scrollY + 14 + "px";
	}
	const hideTip = () => (tip.style.display = "none");

	/* --- tables --- */

	/** The device of a summary that who ({pid, device}: a rank's row, a compared side) names. */
	const findDev = (doc, who) => who && objs(doc.devices).find((d) => d.pid === who.pid && d.device === who.device);
	/** A column: label, the row's member (or a function of the row), how to
	 * show it, whether a number (right-aligned, sorted largest first). */
	const col = (label, key, show, num) => ({ label, value: typeof key === "function" ? key : (r) => r[key], show: show || orDash, num });
	const SHARE_COLS = [col("bytes", "bytes", bytes, 1), col("share", "share", pct, 1), col("allocations", "count", int, 1)];
	const unknown = (v) => v == null || v === "–";

	/** sortable: a click on a header sorts by it, again the other way;
	 * unknown values last either way. */
	function table(columns, rows, sortable, cls) {
		const body = h("tbody");
		const fill = (list) => {
			body.textContent = "";
			for (const row of list)
				body.appendChild(h("tr", null, columns.map((c) => h("td", { class: c.num ? "num" : null }, c.show(c.value(row), row)))));
		};
		let current = -1, descending = true;
		const heads = columns.map((c, i) => {
			const th = h("th", { class: c.num ? "num" : null, scope: "col" });
			if (!sortable) return add(th, [c.label]);
			th.setAttribute("aria-sort", "none");
			const sortBy = () => {
				descending = current === i ? !descending : !!c.num;
				current = i;
				const sign = descending ? -1 : 1;
				fill(rows.slice().sort((a, b) => {
					const x = c.value(a), y = c.value(b);
					if (x === y) return 0;
					if (unknown(x) || unknown(y)) return unknown(x) ? 1 : -1;
					return sign * (isNum(x) && isNum(y) ? x - y : String(x).localeCompare(String(y)));
				}));
				heads.forEach((other) => other.setAttribute("aria-sort", "none"));
				th.setAttribute("aria-sort", descending ? "descending" : "ascending");
			};
			return add(th, [h("button", { type: "button", on: { click: sortBy } }, c.label)]);
		});
		fill(rows);
		return h("div", { class: "table-wrap" }, h("table", { class: (sortable ? "sortable " : "") + (cls || "") },
			h("thead", null, h("tr", null, heads)), body));
	}

	/** Label/value rows; a value undefined leaves its row out. */
	function facts(pairs) {
		const dl = h("dl", { class: "facts" });
		for (const [label, value] of pairs) if (value !== undefined) add(dl, [h("dt", null, label), h("dd", null, value)]);
		return dl;
	}

	/** A layer tree (by_layer) as an indented table; a run of alike
	 * siblings (the first's `alike`, SCHEMA.md) is one row, its label and
	 * totals, and its first member's children once, as "each: ...". */
	function layerTable(nodes) {
		const rows = [];
		const walk = (list, depth, prefix) => {
			const v = objs(list);
			for (let i = 0; i < v.length; ) {
				const node = v[i], run = obj(node.alike);
				const n = run && isNum(run.siblings) && run.siblings > 1 ? Math.min(run.siblings, v.length - i) : 1;
				if (n > 1) rows.push({ name: prefix + orDash(run.label), bytes: run.bytes, share: run.share, count: run.count, depth });
				else rows.push({ ...node, name: prefix + orDash(node.name), depth }); // a spread defines "__proto__" as data
				walk(node.children, depth + 1, n > 1 ? "each: " : "");
				i += n;
			}
		};
		walk(nodes, 0, "");
		const name = col("layer", "name", (v, r) => h("span", { style: { paddingLeft: r.depth * 1.2 + "em" } }, orDash(v)));
		return table([name].concat(SHARE_COLS), rows, false);
	}

	/** by_line: each line with its callers folded under it. */
	function lineTable(lines) {
		const name = col("source line", "name", (v, r) => {
			const stack = arr(r.stack).slice(1), lib = r.library_frames;
			if (!stack.length && !lib) return h("span", { title: r.file || null }, orDash(v));
			return h("details", null, h("summary", { title: r.file || null }, orDash(v)), h("ul", { class: "stack" },
				stack.map((f) => h("li", null, "called from ", f)), lib ? h("li", { class: "muted" }, plural(lib, "library frame") + " inside it, folded") : null));
		});
		return table([name].concat(SHARE_COLS), objs(lines), true);
	}

	/** The largest allocations; a column unknown in every row is left out. */
	function topTable(top) {
		const rows = objs(top);
		const cols = [
			col("bytes", "bytes", bytes, 1), col("requested", "requested", bytes, 1), col("made at", "t", secs, 1),
			// "3", "before 1", "after 20", as analyze's table
			col("step", (r) => (isNum(r.step) && (r.step_when === "before" || r.step_when === "after") ? r.step_when + " " + r.step : r.step), null, 1), col("phase", (r) => phaseLabel(r.phase)), col("category", "category"), col("layer", "layer"), col("line", "line"),
			col("what / API", (r) => r.what || (r.api && r.library ? r.api + " (" + r.library + ")" : r.api)),
			col("freed at", "freed_t", (v) => (isNum(v) ? secs(v) : "never"), 1), col("address", "addr", (v) => h("code", null, orDash(v))),
		].filter((c, i) => i === 0 || c.label === "freed at" || rows.some((r) => !unknown(c.value(r))));
		return table(cols, rows, true, "top");
	}

	/** One bar of parts [{name, bytes, count, color, sub}] and its legend. */
	function stackedBar(parent, id, parts, whole) {
		const total = isNum(whole) && whole > 0 ? whole : sumOf(parts, "bytes");
		const share = (b) => (total > 0 && isNum(b) ? b / total : null);
		const bar = h("div", { class: "stack-bar", id, role: "img", "aria-label": parts.map((p) => p.name + " " + bytes(p.bytes)).join(", ") });
		const legend = h("table", { class: "stack-legend" });
		const row = (p, cls, mark) => h("tr", { class: cls }, h("td", null, mark, p.name), h("td", { class: "num" }, bytes(p.bytes)),
			h("td", { class: "num" }, pct(share(p.bytes))), h("td", { class: "num" }, isNum(p.count) ? int(p.count) + " alloc." : ""));
		for (const p of parts) {
			if (isNum(p.bytes) && p.bytes > 0)
				bar.appendChild(h("div", { class: "stack-part", title: p.name + ": " + bytes(p.bytes), style: { width: (share(p.bytes) * 100).toFixed(3) + "%", background: p.color } }));
			legend.appendChild(row(p, null, swatch(p.color)));
			for (const s of arr(p.sub)) legend.appendChild(row(s, "sub-row"));
		}
		add(parent, [bar, legend]);
		noteChart(id, "stacked", parts.length);
	}

	/** A Set's categories or, in cuda mode (none), its APIs; says which. */
	function categoryBar(parent, id, set) {
		const cats = objs(set.by_category), apis = objs(set.by_api);
		if (cats.length) {
			stackedBar(parent, id, cats.map((c) => ({
				name: orDash(c.category), bytes: c.bytes, count: c.count, color: CATEGORY_COLOR[c.category] || COLOR.device,
				sub: objs(c.by).map((b) => ({ name: "other: " + orDash(b.name), bytes: b.bytes, count: b.count })),
			})));
			return "category";
		}
		if (apis.length) {
			stackedBar(parent, id, apis.map((a, i) => ({ name: orDash(a.api), bytes: a.bytes, count: a.count, color: PALETTE[i % PALETTE.length] })));
			return "API";
		}
		parent.appendChild(muted("No breakdown by category or API."));
		return null;
	}

	/* --- icicle --- */

	const measure = document.createElement("canvas").getContext("2d");

	/** text cut to fit width pixels (12px), with an ellipsis. */
	function fitText(text, width) {
		measure.font = "12px system-ui, sans-serif";
		if (measure.measureText(text).width <= width) return text;
		// no glyph is narrower than 3px: start there, then a character less at a time
		let cut = Math.min(text.length, Math.floor(width / 3));
		while (cut > 0 && measure.measureText(text.slice(0, cut) + "…").width > width) cut--;
		return cut ? text.slice(0, cut) + "…" : "";
	}

	/** The layer tree as an icicle: depth down, bytes across. A node's bytes
	 * hold its children's: d3 sums each one's own (bytes − its children's).
	 * A click zooms into a node; on the top row, or the path above, out. */
	function icicle(parent, id, tree, joiner) {
		const kids = (list) => objs(list).filter((n) => isNum(n.bytes));
		const top = kids(tree);
		if (!top.length) return parent.appendChild(muted("No layer breakdown."));
		const rootData = { name: "live at the peak", bytes: sumOf(top, "bytes"), children: top };
		const childrenOf = (d) => { const c = kids(d.children); return c.length ? c : null; };
		// in the analysis' order (SCHEMA.md, by_layer): largest first, a run
		// of alike siblings together by number
		const root = d3.hierarchy(rootData, childrenOf)
			.sum((d) => Math.max(0, d.bytes - sumOf(kids(d.children), "bytes")));
		d3.partition()(root);
		// a hue per top-level node, lighter with depth; "(no module)" gray
		root.children.forEach((c, i) => c.each((n) => (n.hue = (i * 47 + 215) % 360)));
		const colorOf = (n) => n === root ? "#cbd5e1" : /^\(/.test(n.data.name) ? "hsl(215 14% " + Math.min(88, 62 + n.depth * 6) + "%)"
			: "hsl(" + n.hue + " 62% " + Math.min(86, 48 + n.depth * 8) + "%)";
		const nameOf = (n) => n.data.name;
		const ROW = 24, MAX_ROWS = 14;
		const crumbs = h("nav", { class: "crumbs", "aria-label": "layer path" });
		const holder = h("div", { class: "icicle", id });
		add(parent, [crumbs, holder]);
		let focus = root, drawn = 0;
		const zoom = (n) => { focus = n; hideTip(); render(); };
		const render = () => {
			const width = Math.max(300, holder.clientWidth);
			const rows = Math.min(MAX_ROWS, root.height - focus.depth + 1);
			const scale = (x) => ((x - focus.x0) / (focus.x1 - focus.x0)) * width;
			const pic = svg("svg", { width, height: rows * ROW, role: "img", "aria-label": "live bytes by layer" });
			drawn = 0;
			focus.each((n) => {
				const row = n.depth - focus.depth, x0 = scale(n.x0), w = scale(n.x1) - x0;
				if (row >= rows || w < 0.5) return;
				if (n !== root) drawn++;
				const share = n === root ? "" : " · " + pct(n.data.share);
				const label = n.data.name + " · " + bytes(n.data.bytes) + share;
				const lines = () => [n === root ? n.data.name : n.ancestors().reverse().slice(1).map(nameOf).join(joiner),
					bytes(n.data.bytes) + share + (n === root ? "" : " of what was live"),
					(isNum(n.data.count) ? plural(n.data.count, "allocation") + " · " : "") + (n !== focus ? "click: zoom in" : n !== root ? "click: back out" : "")];
				pic.appendChild(svg("g", { class: "node", transform: "translate(" + x0.toFixed(2) + "," + row * ROW + ")" },
					svg("rect", { width: Math.max(0, w - 1).toFixed(2), height: ROW - 1, fill: colorOf(n) }),
					w > 24 ? svg("text", { x: 4, y: 16 }, fitText(safe(label), w - 8)) : null));
				const g = pic.lastChild;
				g.addEventListener("mousemove", (ev) => showTip(ev, lines()));
				g.addEventListener("mouseleave", hideTip);
				g.addEventListener("click", () => zoom(n === focus ? n.parent || root : n));
			});
			holder.textContent = "";
			holder.appendChild(pic);
			crumbs.textContent = "";
			focus.ancestors().reverse().forEach((n, i, all) => add(crumbs, [i ? " › " : null, i === all.length - 1
				? h("span", { class: "crumb-here" }, nameOf(n)) : h("button", { type: "button", class: "crumb", on: { click: () => zoom(n) } }, nameOf(n))]));
		};
		render();
		resizers.push(render);
		noteChart(id, "icicle", drawn);
	}

	/* --- uPlot --- */

	const xTime = (v, incr) => (isNum(v) ? v.toFixed(Math.max(0, Math.min(6, -Math.floor(Math.log10(incr || 0.001))))) + " s" : "–");
	const xStep = (v) => (isNum(v) ? "step " + Math.round(v) : "–");

	/** A uPlot chart of bytes over time or steps. cfg: id, kind, data,
	 * series, bands, hooks, xKind, height, yMax() (a floor for y's top), fit
	 * (y spans the data, not from 0: small growth shows), sync (a key: charts
	 * that share it share the cursor and the zoom). */
	function plot(parent, cfg) {
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
			series: [{ label: isTime ? "time" : "step", value: (u, v) => (isTime ? xTime(v, 0.001) : xStep(v)) }].concat(
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
	function paint(u, fn) {
		const ctx = u.ctx;
		const r = ctx.canvas.width / Math.max(1, ctx.canvas.getBoundingClientRect().width) || 1;
		ctx.save();
		ctx.font = 11 * r + "px system-ui, sans-serif";
		ctx.textAlign = "left"; // uPlot leaves its axes' alignment behind
		ctx.textBaseline = "alphabetic";
		fn(ctx, r, u.bbox);
		ctx.restore();
	}
	/** Text at (x, y), flipped to the left of x where it would overflow. */
	function label(ctx, text, x, y, gap, box) {
		const w = ctx.measureText(text).width;
		ctx.fillText(text, x + gap + w > box.left + box.width ? x - gap - w : x + gap, y);
	}
	/** A vertical line at x (dashed), labelled in text row `row` from the
	 * top; from y0 to y1 (values), thick, where given. */
	function vmark(u, x, color, dash, text, row, y0, y1) {
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
	function hmark(u, y, color, text) {
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
	function dot(u, x, y, color, text) {
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
	const keyRow = (items) => h("div", { class: "key" }, items.map(([color, text, cls]) => h("span", null, swatch(color, cls), text)));

	/* --- timeline --- */

	/** Time axis: each bucket's start (10^6 at most), the last one's end, and
	 * a later failed allocation; past the buckets a column holds its last. */
	function axisOf(dev) {
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

	function timelineChart(parent, dev, key) {
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
			// labels of marks closer than a label's width go on the next row
			let lastPx = -Infinity, row = 0;
			ooms.forEach((o) => {
				// numbered as the cards of the section are
				const text = "OOM" + (cards.length > 1 ? " " + (cards.indexOf(o) + 1) : "") + ": " + bytes(o.request);
				const px = u.valToPos(o.t, "x");
				row = px - lastPx < 120 ? (row % 3) + 1 : 1;
				lastPx = px;
				vmark(u, o.t, COLOR.bad, [4, 3], text, row);
				if (!labelsNoted) selftest.labels.push({ chart: key + "-timeline", text, row });
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
		if (steps.length > 1) {
			// a program may import for seconds before its first step
			const from = Math.max(xs[0], steps[0].t - (steps[1].t - steps[0].t));
			if (from - xs[0] > (xs[xs.length - 1] - xs[0]) * 0.3) {
				// most of the run came before the steps: it opens on them
				// (double-click shows the whole run)
				const toSteps = () => u.setScale("x", { min: from, max: xs[xs.length - 1] });
				controls.appendChild(h("button", { type: "button", on: { click: toSteps } }, "zoom to the steps"));
				toSteps();
			}
		}
		controls.appendChild(h("span", { class: "muted hint" }, "drag: zoom · Shift+drag: pan · double-click: all · per bucket of " + duration(dt) + ": the most (line) and least (band)"));
	}

	/** steps.series's points with a step and what has(s). */
	const stepPoints = (dev, has) => objs(dev && obj(dev.steps) && dev.steps.series).filter((s) => isNum(s.step) && has(s));
	const stepColumn = (pts, key) => pts.map((s) => (isNum(s[key]) ? s[key] : null));

	/** Without a timeline (a summary): steps.series. */
	function stepsChart(parent, id, dev) {
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

	/* --- a device --- */

	const traceOf = (dev, run) => obj(arr(run.traces)[dev.trace]) || {};
	function deviceTitle(dev, run) {
		const rank = traceOf(dev, run).rank;
		return "process " + orDash(dev.pid) + (isNum(rank) ? ", rank " + rank : "") + " · GPU " + orDash(dev.device) +
			(dev.name ? ": " + dev.name : "") + (isNum(dev.capacity) ? ", " + bytes(dev.capacity) : "");
	}

	/** The memory_summary() numbers, at the top of a device; the kinds of
	 * memory apart from the device's (module globals, pinned host memory)
	 * are rows for a CUDA program, one line below for PyTorch's users, as
	 * in the text report. */
	function summaryTable(dev) {
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

	function timeSection(sec, dev, key) {
		if (obj(dev.timeline)) return timelineChart(sec, dev, key);
		sec.appendChild(h("p", { class: "notice" }, "No memory over time: the input was a summary, not a trace. Below: what was live at each step mark."));
		stepsChart(sec, key + "-steps", dev);
	}

	/* --- collective calls (NCCL) around a moment: SCHEMA.md "Collectives" --- */

	/** "1.204 ms before" of time x against moment t. */
	function relMs(x, t) {
		if (!isNum(x) || !isNum(t)) return "–";
		const ms = (x - t) * 1e3;
		return Math.abs(ms) < 0.0005 ? "then" : Math.abs(ms).toFixed(3) + " ms " + (ms < 0 ? "before" : "after");
	}

	function collectiveText(c, t, during) {
		const parts = ["stream " + orDash(c.stream)];
		if (isNum(c.launch_t)) parts.push("launched " + relMs(c.launch_t, t));
		if (during) parts.push(c.start_t > t ? "queued: starts " + relMs(c.start_t, t) : "running since " + relMs(c.start_t, t));
		parts.push((c.end_t > t ? "ends " : "ended ") + relMs(c.end_t, t));
		return orDash(c.op) + " (" + parts.join(", ") + ")";
	}

	/** One line: the collectives outstanding at moment t, or the last and the next. */
	function collectivesLine(c, t, moment) {
		if (!obj(c)) return null;
		const during = objs(c.during);
		if (during.length)
			return "Collectives at " + moment + ": " + during.map((x) => collectiveText(x, t, true)).join("; ") +
				(c.during_left_out > 0 ? "; and " + c.during_left_out + " more" : "") + ".";
		return "Collectives at " + moment + ": none outstanding" + (obj(c.before) ? "; the last: " + collectiveText(c.before, t, false) : "") +
			(obj(c.after) ? "; the next: " + collectiveText(c.after, t, false) : "") + ".";
	}

	/** A ranks-table cell: "AllGather +1", "(after AllReduce)", "" without any. */
	function collectiveCell(c) {
		if (!obj(c)) return "";
		const during = objs(c.during), more = during.length ? during.length - 1 + (c.during_left_out || 0) : 0;
		if (during.length) return orDash(during[0].op) + (more ? " +" + more : "");
		return obj(c.before) ? "(after " + orDash(c.before.op) + ")" : "(none yet)";
	}

	function peakSection(sec, dev, key) {
		const p = obj(dev.peak);
		if (!p) return sec.appendChild(para("No device memory was allocated."));
		sec.appendChild(para("Peak: " + bytes(p.bytes) + " " + orDash(p.what) + " at " + when(p) + (p.layer ? " (allocating in " + p.layer + ")" : "")));
		// as analyze's text: what the charts below share out (live: the
		// framework's and the rest), then the device total
		const torch = dev.mode !== "cuda";
		const live = isNum(p.live_bytes) ? "Live then: " + bytes(p.live_bytes) + (isNum(p.live_allocations) ? " in " + int(p.live_allocations) + " allocations" : "") +
			(torch && p.other > 0 ? " (" + bytes(Math.max(0, p.live_bytes - p.other)) + " of PyTorch's, " + bytes(p.other) + " outside PyTorch)" : "") : null;
		const beside = [live, isNum(p.reserved) && bytes(p.reserved) + " reserved",
			isNum(p.device_total) && "device total " + bytes(p.device_total) + (dev.capacity > 0 ? ", " + pct(p.device_total / dev.capacity) + " of the device's " + bytes(dev.capacity) : "")].filter(Boolean);
		if (beside.length) sec.appendChild(muted(beside.join("; ") + "."));
		const coll = collectivesLine(p.collectives, p.t, "the peak");
		if (coll) sec.appendChild(muted(coll));
		const cuda = dev.mode === "cuda";
		guard(sec, key + "-icicle", () => {
			add(sec, [heading(cuda ? "By NVTX range" : "By layer (module path)"), muted("Click a layer to zoom in; the top row or the path above goes back.")]);
			icicle(sec, key + "-icicle", p.by_layer, cuda ? " > " : ".");
			// the same rows as the text's table, alike blocks as one
			sec.appendChild(h("details", null, h("summary", null, "As a table"), layerTable(p.by_layer)));
		});
		guard(sec, key + "-cat", () => {
			const title = sec.appendChild(heading("By category"));
			if (categoryBar(sec, key + "-cat", p) === "API") title.textContent = "By API (no categories in cuda mode)";
		});
		if (objs(p.by_phase).length)
			guard(sec, key + "-phase", () => {
				sec.appendChild(heading("By phase (when made)"));
				stackedBar(sec, key + "-phase", objs(p.by_phase).map((x) => ({ name: orDash(phaseLabel(x.phase)), bytes: x.bytes, count: x.count, color: phaseColor(x.phase, 0.75) || "#cbd5e1" })));
			});
		if (objs(p.by_line).length) add(sec, [heading("By source line"), lineTable(p.by_line)]);
		if (objs(p.top).length) add(sec, [heading("Largest allocations at the peak (click a header to sort)"), topTable(p.top)]);
	}

	function leakSection(sec, dev, key) {
		const leak = obj(dev.leak) || {};
		const grow = obj(dev.growth);
		if (grow) {
			// each step's peak larger than the last, nothing left between steps
			sec.appendChild(verdict(false, "Growth, not a leak: each step's peak is larger than the last, ×" +
				(isNum(grow.factor_per_step) ? grow.factor_per_step.toFixed(2) : "–") + " a step from step " + orDash(grow.since_step) +
				" (" + bytes(grow.first_peak) + ") to step " + orDash(grow.last_step) + " (" + bytes(grow.last_peak) + ")"));
			sec.appendChild(para("Live memory between steps went from " + bytes(grow.live_first) + " to " + bytes(grow.live_last) +
				": what each step holds grows (a growing batch or sequence?)" +
				(isNum(grow.next_peak) ? "; at that rate the next step peaks near " + bytes(grow.next_peak) +
					(isNum(dev.capacity) && grow.next_peak > dev.capacity ? ", more than the device's " + bytes(dev.capacity) : "") : "") + "."));
		}
		if (leak.verdict !== "leak") {
			sec.appendChild(para({
				"no steps": "No steps were marked: growth per step cannot be judged.",
				"too few steps": (grow ? "Between steps: too few" : "Too few") + " steps past the warm-up (" + orDash(leak.warmup_steps) + " steps) to judge growth.",
				none: leak.why ? "No leak: " + leak.why + "." : "No leak: live memory at the step marks did not grow" + (isNum(leak.rate_per_step) ? " (" + signed(leak.rate_per_step) + " per step since step " + orDash(leak.since_step) + ", grew at " + orDash(leak.grew) + " of " + orDash(stepsCompared(leak)) + " steps)" : "") + ".",
			}[leak.verdict] || "Growth not judged (" + orDash(leak.verdict) + ")."));
			if (leak.why) sec.appendChild(muted(leak.why));
			return;
		}
		sec.appendChild(verdict(false, "Leak: " + signed(leak.rate_per_step) + " per step since step " + orDash(leak.since_step) +
			" (grew at " + orDash(leak.grew) + " of " + orDash(stepsCompared(leak)) + " steps, fit R² " + (isNum(leak.r2) ? leak.r2.toFixed(3) : "–") + ")"));
		const more = [isNum(leak.steps_until_full) && "at this rate the device is full in about " + int(leak.steps_until_full) + " more steps",
			isNum(leak.rate_per_second) && bytes(leak.rate_per_second) + "/s"].filter(Boolean);
		if (more.length) sec.appendChild(para(more.join(" · ")));
		guard(sec, key + "-leak", () => leakChart(sec, dev, leak, key + "-leak"));
		const surv = obj(leak.survivors);
		if (!surv) return;
		sec.appendChild(para("Still live at step " + orDash(leak.last_step) + ": " + bytes(surv.bytes) + " made in steps " + orDash(surv.from_step) + "–" +
			orDash(surv.to_step) + " (" + bytes(surv.per_step) + " per step, " + int(surv.allocations) + " allocations)."));
		if (objs(surv.by_layer).length) add(sec, [heading("The survivors by layer"), layerTable(surv.by_layer)]);
		if (objs(surv.by_line).length) add(sec, [heading("By source line"), lineTable(surv.by_line)]);
	}

	/** Live bytes per step and analyze's fit: its slope from since_step on,
	 * the intercept by least squares (the mean of live − slope × step). */
	function leakChart(sec, dev, leak, id) {
		const pts = stepPoints(dev, (s) => isNum(s.live));
		if (pts.length < 2) return;
		const data = [pts.map((s) => s.step), pts.map((s) => s.live)];
		const series = [{ label: "live at the step mark", stroke: COLOR.allocated }];
		const slope = leak.rate_per_step, since = leak.since_step;
		const fitted = pts.filter((s) => isNum(since) && s.step >= since);
		if (isNum(slope) && fitted.length) {
			const intercept = fitted.reduce((a, s) => a + s.live - slope * s.step, 0) / fitted.length;
			data.push(pts.map((s) => (s.step >= since ? intercept + slope * s.step : null)));
			series.push({ label: "fit: " + signed(slope) + " per step", stroke: COLOR.bad, dash: [6, 4], spanGaps: false, points: { show: false } });
		}
		if (pts.some((s) => isNum(s.total) && s.total !== s.live)) {
			data.push(stepColumn(pts, "total"));
			series.push({ label: "device total", stroke: COLOR.device, width: 1, dash: [2, 3] });
		}
		plot(sec, { id, kind: "leak", xKind: "step", data, series, height: 260, fit: true });
	}

	/** The failed request against the device: what was held, what was free,
	 * and the request drawn from where the free memory began. */
	function oomBar(parent, id, o, dev) {
		const num = (v) => (isNum(v) ? v : 0);
		const total = isNum(o.total) ? o.total : isNum(dev.capacity) ? dev.capacity : null, request = num(o.request);
		const alloc = num(o.allocated), cached = isNum(o.reserved) ? Math.max(0, o.reserved - alloc) : 0;
		const held = alloc + cached + num(o.other);
		// neither this process's nor free: other processes, the CUDA context
		// (from the free count where the recorder read it)
		// analyze's outside_trace where it gives one (one value, defined once:
		// CATEGORIES.md); else from the free count
		const known = total !== null && isNum(o.free);
		const outside = isNum(o.outside_trace) ? o.outside_trace : known ? Math.max(0, total - o.free - held) : 0;
		const free = isNum(o.free) ? o.free : total !== null ? Math.max(0, total - held - outside) : 0;
		const parts = [["allocated", alloc, COLOR.allocated], ["reserved, not allocated", cached, COLOR.cached], ["other libraries", num(o.other), COLOR.other],
			["not in the trace (other processes, CUDA context)", outside, COLOR.outside], ["free", free, COLOR.free]].filter((p) => p[1] > 0);
		const start = held + outside, over = total === null ? 0 : start + request - total;
		const scale = Math.max(total, start + free, start + request) || 1;
		const pos = (v) => ((v / scale) * 100).toFixed(3) + "%";
		const row = (name, kids) => h("div", { class: "oom-row" }, h("div", { class: "oom-label" }, name), h("div", { class: "oom-track" }, kids,
			total !== null && h("div", { class: "oom-cap", style: { left: pos(total) } })));
		let at = 0;
		const seg = (b, color, cls) => h("div", { class: "oom-seg " + (cls || ""), style: { left: pos(at), width: pos(b), background: color } });
		const segs = parts.map(([, b, color]) => {
			const part = seg(b, color);
			at += b;
			return part;
		});
		at = start;
		parent.appendChild(h("div", { class: "oom-bar", id, role: "img", "aria-label": "a request of " + bytes(o.request) + " with " + bytes(free) + " free of " + bytes(total) },
			row("device " + bytes(total), segs), row("request", seg(request, null, "request"))));
		parent.appendChild(keyRow(parts.map((p) => [p[2], p[0] + " " + bytes(p[1])]).concat([[COLOR.bad, "request " + bytes(o.request)]])));
		if (over > 0) parent.appendChild(muted("The request was " + bytes(over) + " more than the device had left" + (request > total ? ", and more than the whole device" : "") + "."));
		noteChart(id, "oom", segs.length + 1);
	}

	function oomSection(sec, dev, key) {
		if (obj(dev.oom_outcomes)) return oomOutcomes(sec, dev, key);
		const ooms = objs(dev.ooms);
		const count = isNum(dev.oom_count) ? dev.oom_count : ooms.length;
		sec.appendChild(para(plural(count, "failed allocation") + (ooms.length < count ? ", " + ooms.length + " of them listed" : "") + "."));
		const left = obj(dev.ooms_left_out);
		if (left && left.count > 0)
			sec.appendChild(muted("Not listed: " + left.count + " (" + orDash(left.recovered) + " recovered from, " + orDash(left.raised) + " raised by PyTorch; " +
				bytes(left.released) + " of cache released in " + int(left.retries) + " retries)."));
		ooms.forEach((o, i) => {
			const title = o.recovered ? "Failed, then recovered from (a retry succeeded)" : i === 0 ? "The allocation the program did not get past" : "Failed, not recovered from";
			section(sec, key + "-oom" + i, i + 1 + ". " + title, (box) => oomOne(box, o, dev, key + "-oom" + i), 3);
		});
	}

	/** The failures by outcome, one set of counts in the words of the text
	 * report; a card for each the program did not get past inside a
	 * library; one line for those it did. */
	function oomOutcomes(sec, dev, key) {
		const by = dev.oom_outcomes, ooms = objs(dev.ooms), count = isNum(dev.oom_count) ? dev.oom_count : 0;
		const parts = OOM_OUTCOMES.filter(([k]) => isNum(by[k]) && by[k] > 0).map(([k, words]) => by[k] + " " + words);
		sec.appendChild(para("Out of memory: " + plural(count, "failed allocation") + ": " + parts.join(", ")));
		const cards = ooms.filter(carded);
		cards.forEach((o, i) => {
			const title = o.fatal ? "Fatal: the program did not get past it" : "Got past by the program: it completed later steps";
			section(sec, key + "-oom" + i, i + 1 + ". " + title, (box) => oomOne(box, o, dev, key + "-oom" + i), 3);
		});
		const more = (isNum(by.fatal) ? by.fatal : 0) + (isNum(by.later_steps) ? by.later_steps : 0) - cards.length;
		if (more > 0) sec.appendChild(muted(more + " more of them not shown"));
		const past = obj(dev.ooms_got_past);
		if (!past || !(past.count > 0)) return;
		const released = (isNum(obj(dev.ooms_left_out) && dev.ooms_left_out.released) ? dev.ooms_left_out.released : 0) +
			sumOf(ooms.filter((o) => o.outcome === "retried"), "released_after");
		const how = [by.caught > 0 && by.caught + " caught there, the work went on",
			by.retried > 0 && by.retried + " retried by the allocator after releasing " + bytes(released) + " of cached memory"].filter(Boolean).join("; ");
		// three digits, as the text report writes it
		const s = isNum(past.seconds) ? past.seconds : 0, v = s >= 1 ? s : s >= 1e-3 ? s * 1e3 : s * 1e6;
		const spent = (v >= 1000 ? v.toFixed(0) : String(+v.toPrecision(3))) + (s >= 1 ? " s" : s >= 1e-3 ? " ms" : " µs");
		sec.appendChild(para(h("strong", null, "got past inside a library:"), " " + plural(past.count, "failed allocation") + " (" + how + "), " +
			bytes(past.bytes) + " asked for, " + spent + " spent getting past them"));
		// each kind of advice once, from the latest retried one that has it (as the text)
		const seen = new Set(), advice = [];
		for (const o of ooms.filter((x) => x.recovered).reverse())
			for (const a of objs(o.advice))
				if (a.text && !seen.has(a.kind)) {
					seen.add(a.kind);
					advice.push(a.text);
				}
		if (advice.length) sec.appendChild(h("ul", { class: "advice" }, advice.map((t) => h("li", null, t))));
	}

	function oomOne(box, o, dev, id) {
		box.appendChild(verdict(false, "Asked for " + bytes(o.request) + " with " + bytes(o.free) + " free of " +
			bytes(isNum(o.total) ? o.total : dev.capacity) + ", at " + when(o) + (o.layer ? ", in " + o.layer : "")));
		guard(box, id + "-bar", () => oomBar(box, id + "-bar", o, dev));
		const torch = obj(o.pytorch);
		box.appendChild(facts([
			["call", orDash(o.api) + (isNum(o.result) ? " → error " + o.result : "")],
			["op", o.op || undefined],
			["allocated", bytes(o.allocated)],
			["reserved", size(o.reserved)],
			["other libraries", size(o.other)],
			["this process's device memory", size(o.device_total)],
			["outside the trace", size(o.outside_trace)],
			["retries", isNum(o.retries) ? o.retries + (o.released_after ? ", after releasing " + bytes(o.released_after) + " of cache" : "") : undefined],
			["PyTorch", o.raised ? "raised OutOfMemoryError" + (torch ? ": tried to allocate " + bytes(torch.request) + " (a block of " + bytes(torch.block) + "); it held " +
				bytes(torch.allocated) + " allocated, " + bytes(torch.reserved) + " reserved, " + bytes(torch.free) + " free" : "") : undefined],
		]));
		const coll = collectivesLine(o.collectives, o.t, "that moment");
		if (coll) box.appendChild(muted(coll));
		const advice = objs(o.advice).filter((a) => a.text);
		if (advice.length) add(box, [heading("What may help"), h("ul", { class: "advice" }, advice.map((a) => h("li", null, a.text)))]);
		if (o.detailed === false) return box.appendChild(muted("Counts only (what was live is kept for the first 8)."));
		if (isNum(o.live_bytes)) box.appendChild(heading("What was live: " + bytes(o.live_bytes) + " in " + plural(o.live_allocations, "allocation")));
		guard(box, id + "-cat", () => categoryBar(box, id + "-cat", o));
		const fold = (title, el) => h("details", null, h("summary", null, title), el);
		if (objs(o.by_layer).length) box.appendChild(fold("By layer", layerTable(o.by_layer)));
		if (objs(o.by_line).length) box.appendChild(fold("By source line", lineTable(o.by_line)));
		if (objs(o.top).length) add(box, [heading("Largest holders"), topTable(o.top)]);
	}

	/** The cache's fragmentation (summary.cache.fragmentation), one line. */
	function splitLine(sp) {
		if (!sp || sp.known !== true) return undefined;
		if (!sp.segments) return "none: no segment was reserved while the cache held the bytes of the block it was made for";
		const w = obj(sp.worst);
		return plural(sp.segments, "segment") + " (" + bytes(sp.bytes) + ") reserved while the cache held enough free bytes for the block, in pieces too small" +
			(w ? "; worst at " + when(w) + ": " + bytes(w.cached) + " free for a block of " + bytes(w.block) : "") +
			(sp.expandable_segments ? " (expandable segments on)" : "");
	}

	function fragSection(sec, dev, key) {
		// summary.cache; documents older than it call it fragmentation
		const sum = obj(dev.summary) || {};
		const f = obj(sum.cache) || obj(sum.fragmentation) || {};
		const worst = obj(f.worst), atPeak = obj(f.at_peak);
		if (f.known === false || (!worst && !atPeak)) return sec.appendChild(para("Not known" + (f.why ? ": " + f.why : "") + "."));
		const moment = (m) => bytes(m.gap) + " reserved but not allocated at " + when(m) + " (" + bytes(m.reserved) + " reserved, " + bytes(m.allocated) + " allocated)";
		sec.appendChild(para("The cache is what PyTorch reserved but has not allocated: blocks freed and kept for reuse. Fragmentation is the part of it too split to serve a request."));
		sec.appendChild(facts([
			["when reserved reached its peak", atPeak ? moment(atPeak) + (atPeak.reserved > 0 ? ": " + pct(atPeak.gap / atPeak.reserved) + " of it" : "") : undefined],
			["most cached", worst ? moment(worst) : undefined],
			["at the end", size(f.end) && size(f.end) + " (often just the allocator's cache)"],
			["fragmentation", splitLine(obj(f.fragmentation))],
			["from", f.source || undefined],
		]));
		// over time, from the timeline (without one, the chart of steps above
		// has reserved and live at each step mark)
		const tl = obj(dev.timeline);
		if (!tl || !obj(tl.reserved) || !obj(tl.allocated)) return;
		const { xs, column } = axisOf(dev);
		plot(sec, {
			id: key + "-frag", kind: "frag", sync: key, height: 240, bands: [{ series: [1, 2], fill: withAlpha(COLOR.reserved, 0.25) }],
			data: [xs, column(tl.reserved.max), column(tl.allocated.max)],
			series: [{ label: "reserved (max)", stroke: COLOR.reserved }, { label: "allocated (max)", stroke: COLOR.allocated }],
			hooks: { draw: [(u) => {
				if (worst && isNum(worst.t)) vmark(u, worst.t, "#9a3412", [4, 3], "most cached " + bytes(worst.gap), 0);
				if (atPeak && isNum(atPeak.t)) vmark(u, atPeak.t, "#1f2937", [2, 3], "at reserved's peak " + bytes(atPeak.gap), 1);
			}] },
		});
		sec.appendChild(keyRow([[withAlpha(COLOR.reserved, 0.4), "the cache: reserved but not allocated"]]));
	}

	/** Advice about the run as a whole (devices[].advice). */
	function adviceSection(sec, dev) {
		const advice = objs(dev.advice).filter((a) => a.text);
		sec.appendChild(h("ul", { class: "advice" }, advice.map((a) => h("li", null, a.text))));
	}

	/* --- the run --- */

	const SIGNALS = { 2: "SIGINT", 6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM" };

	/** "3 CUPTI, 1 host": the counts above zero. */
	const counts = (pairs) => pairs.filter((x) => isNum(x[1]) && x[1] > 0).map((x) => int(x[1]) + " " + x[0]).join(", ");

	function runSection(sec, data, run) {
		const traces = objs(run.traces);
		sec.appendChild(facts([["report by", orDash(data.generator)], ["analyzed by", "gpuprof " + orDash(run.gpuprof_version)], ["inputs", arr(data.inputs).join(", ") || "–"]]));
		traces.forEach((t, i) => {
			const state = [t.complete && "complete", t.cut_short && "cut short (a crash?)", t.recovered && "recovered by gpuprof recover",
				t.clean_exit === false && "not a clean exit", isNum(t.end_signal) && "ended by signal " + t.end_signal + (SIGNALS[t.end_signal] ? " (" + SIGNALS[t.end_signal] + ")" : "")];
			const d = obj(t.dropped) || {}, torch = obj(t.torch), hook = obj(t.allocator_hook), hist = obj(t.torch_history);
			const odd = counts([["late memory records", t.late_memory_records], ["unmatched frees", t.unmatched_frees], ["reused addresses", t.reused_addresses],
				["unattributed allocations", t.unattributed_allocations], ["late events", t.late_events]]);
			sec.appendChild(h("h3", null, "Trace " + (i + 1) + ": " + orDash(t.path)));
			sec.appendChild(facts([
				["command", h("code", null, orDash(t.cmdline))],
				["process", orDash(t.pid) + (isNum(t.rank) ? ", rank " + t.rank : "") + (t.hostname ? " on " + t.hostname : "")],
				["started", Math.abs(t.start_unix_ns) < 8e21 ? new Date(t.start_unix_ns / 1e6).toISOString() : undefined], // a Date's range
				["mode", orDash(t.mode)],
				["torch", torch ? orDash(torch.version) + (torch.backend ? ", allocator " + torch.backend : "") + (torch.alloc_conf ? ", PYTORCH_CUDA_ALLOC_CONF=" + torch.alloc_conf : "") : undefined],
				["allocator hook", hook ? (hook.attached ? "attached" : "not attached" + (hook.why ? ": " + hook.why : "")) + (hook.stacks ? ", with Python stacks" : "") : undefined],
				["allocator history", hist ? (hist.complete ? "complete" : "not the whole run") : undefined],
				["trace", state.filter(Boolean).join("; ") || "–"],
				["events", int(t.events)],
				["dropped records", counts([["CUPTI", d.cupti], ["host", d.host], ["marked", d.marked]]) || "none"],
				["oddities", odd || undefined],
			]));
			if (arr(t.notes).length) sec.appendChild(bulleted(arr(t.notes)));
		});
		const devs = objs(run.devices);
		if (devs.length)
			sec.appendChild(table([col("process", "pid", null, 1), col("GPU", "device", null, 1), col("name", "name"), col("capacity", "capacity", bytes, 1),
				col("mode", "mode"), col("UUID", "uuid", (v) => h("code", null, orDash(v)))], devs, false));
		for (const g of objs(run.gpus))
			sec.appendChild(para("GPU " + orDash(g.uuid) + " (shared): together the processes peaked at " + bytes(g.peak) + " at " + secs(g.peak_t) + ": " +
				objs(g.by_process).map((p) => "process " + orDash(p.pid) + " " + bytes(p.bytes)).join(", ") + "."));
		sec.appendChild(h("h3", null, "Open the trace in Perfetto"));
		sec.appendChild(para("Kernels, copies, NVTX ranges and memory counters per stream: open https://ui.perfetto.dev, choose “Open trace file” and pick " +
			(traces.map((t) => t.path).join(", ") || "the .json.gz trace") + "."));
	}

	/* --- the ranks of a distributed job --- */

	/** "signal 15 (SIGTERM)": the Linux numbers the recorder finishes a trace for. */
	function signalName(n) {
		const names = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 11: "SIGSEGV", 15: "SIGTERM" };
		return "signal " + orDash(n) + (names[n] ? " (" + names[n] + ")" : "");
	}

	function ranksSection(sec, run) {
		const k = run.ranks;
		const rows = objs(k.by_rank);
		const first = rows.find((r) => r.rank === k.first_out_rank) || {};
		const why = obj(k.why);
		const peakOf = (r) => obj((findDev(run, r) || {}).peak) || {};
		const how = k.first_out_by === "oom" ? "it ran out of memory first, at " + secs(first.first_oom_t) + (isNum(first.first_oom_step) ? ", " + stepText(first.first_oom_step, first.first_oom_step_when) : "")
			: k.first_out_by === "headroom" ? "the least room left on its GPU: " + bytes(first.headroom) + " of " + bytes(first.capacity)
				: "the largest peak";
		sec.appendChild(verdict(false, "Runs out first: rank " + orDash(k.first_out_rank) + " (" + how + ")"));
		// the ranks the launcher ended once that one had failed
		for (const r of rows.filter((x) => x.stopped_after_first))
			sec.appendChild(para("Rank " + r.rank + " was ended by " + signalName(r.end_signal) + " " +
				(isNum(r.end_t) && isNum(first.first_oom_t) ? (r.end_t - first.first_oom_t).toFixed(3) + " s " : "") + "after rank " +
				orDash(k.first_out_rank) + " ran out: stopped with the job, not out of memory itself."));
		const firstColl = collectivesLine(peakOf(first).collectives, peakOf(first).t, "its peak");
		if (firstColl) sec.appendChild(muted(firstColl));
		sec.appendChild(facts([
			["ranks traced", rows.length + (isNum(k.world_size) ? " of " + k.world_size : "")],
			["no trace from", arr(k.missing).length ? arr(k.missing).join(", ") : undefined],
			["peak is", orDash(k.peak_what) + " memory"],
			["spread", bytes(k.spread) + " (" + pct(k.spread_share) + " of the largest): rank " + orDash(k.min_rank) + " to rank " + orDash(k.max_rank)],
		]));
		sec.appendChild(table([col("rank", "rank", null, 1), col("host", "hostname"), col("GPU", "device", null, 1), col("peak", "peak", bytes, 1),
			col("allocated", "allocated_peak", bytes, 1), col("reserved", "reserved_peak", bytes, 1), col("device", "device_peak", bytes, 1),
			col("outside the framework", "other_peak", bytes, 1), col("headroom", "headroom", bytes, 1), col("failed", "oom_count", int, 1),
			col("collective at the peak", (r) => collectiveCell(peakOf(r).collectives))], rows, true));
		// each rank's peak as a bar, the one that runs out first marked
		const max = Math.max(1, ...rows.map((r) => (isNum(r.peak) ? r.peak : 0)));
		// set through the CSSOM: the page's policy allows no style attributes
		const bar = (r) => {
			const b = h("span", { class: "rank-bar" });
			b.style.width = (100 * (isNum(r.peak) ? r.peak : 0) / max).toFixed(1) + "%";
			b.style.background = r.rank === k.first_out_rank ? COLOR.bad : COLOR.allocated;
			return h("span", { class: "rank-track" }, b);
		};
		sec.appendChild(h("div", { class: "rank-bars" }, rows.map((r) => h("div", { class: "rank-row" },
			h("span", null, "rank " + r.rank + (r.rank === k.first_out_rank ? " ◀" : "")), bar(r), h("span", { class: "num" }, bytes(r.peak))))));
		if (!why) return;
		sec.appendChild(para("At its peak rank " + orDash(k.first_out_rank) + " holds " + signed(why.peak_delta) + " against rank " +
			orDash(why.compared_with_rank) + " at its own" + (why.other_delta ? "; outside the framework " + signed(why.other_delta) : "") + ":"));
		const diff = (first_) => [col(first_, "name"), col("rank " + k.first_out_rank, "first", bytes, 1), col("rank " + why.compared_with_rank, "typical", bytes, 1),
			col("difference", "delta", (v) => h("span", { class: v > 0 ? "grew" : v < 0 ? "shrank" : null }, signed(v)), 1)];
		if (objs(why.by_category).length) add(sec, [heading("By category"), table(diff("category"), objs(why.by_category), true)]);
		if (objs(why.by_layer).length) add(sec, [heading("By layer (each layer's own bytes)"), table(diff("layer"), objs(why.by_layer), true)]);
		if (objs(why.by_line).length) add(sec, [heading("By source line"), table(diff("line"), objs(why.by_line), true)]);
	}

	/* --- two runs --- */

	function compareSection(sec, data) {
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

	/* --- the page --- */

	function header(app, data, run, toc) {
		const head = h("header", { class: "top" }, h("h1", null, "gpuprof report"));
		for (const t of objs(run.traces))
			head.appendChild(h("div", { class: "cmd" }, h("code", null, orDash(t.cmdline)), " ",
				h("span", { class: "muted" }, "(" + orDash(t.mode) + " mode, process " + orDash(t.pid) + (t.cut_short ? ", cut short" : "") + ")")));
		const lines = objs(run.devices).map((d) => {
			const p = obj(d.peak), failed = isNum(d.oom_count) ? d.oom_count : arr(d.ooms).length;
			return h("li", null, deviceTitle(d, run) + ": " + (p ? "peak " + bytes(p.bytes) + " " + orDash(p.what) + " at " + secs(p.t) : "nothing allocated") +
				(failed ? "; " + plural(failed, "failed allocation") : "") + (obj(d.leak) && d.leak.verdict === "leak" ? "; leaking " + bytes(d.leak.rate_per_step) + " per step" : ""));
		});
		head.appendChild(lines.length ? h("ul", { class: "headline" }, lines) : h("p", { class: "notice" }, "No device memory activity was recorded."));
		if (obj(data.compare)) head.appendChild(verdict(data.compare.verdict === "ok", "Against BASE: " + orDash(data.compare.verdict)));
		const link = (item) => h("a", { href: "#" + item.id }, item.title);
		head.appendChild(h("nav", { class: "toc", "aria-label": "contents" }, h("h2", null, "Contents"), h("ol", null, toc.map((item) =>
			h("li", null, link(item), item.kids ? h("ol", null, item.kids.map((k) => h("li", null, link(k)))) : null)))));
		app.appendChild(head);
	}

	function render(app) {
		const data = JSON.parse(document.getElementById("gpuprof-data").textContent);
		if (!obj(data) || !obj(data.run)) throw new Error("the data has no run (schema " + orDash(obj(data) && data.schema) + ")");
		const run = data.run;
		// the plan first: the table of contents names what follows; the rank
		// that ran out first before the others
		const toc = [];
		const ranks = obj(run.ranks);
		const lead = ranks && ranks.first_out_by === "oom" &&
			findDev(run, objs(ranks.by_rank).find((r) => r.rank === ranks.first_out_rank));
		const devices = objs(run.devices).map((dev, i) => [dev, i]);
		devices.sort((a, b) => (b[0] === lead) - (a[0] === lead) || a[1] - b[1]);
		const plan = devices.map(([dev, i]) => {
			const key = "dev" + i;
			const parts = [["-time", "Memory over time", timeSection], ["-peak", "The peak", peakSection], ["-leak", "Growth between steps", leakSection]];
			if (arr(dev.ooms).length || dev.oom_count > 0) parts.push(["-oom", "Out of memory", oomSection]);
			parts.push(["-frag", "Cache and fragmentation", fragSection]);
			if (objs(dev.advice).some((a) => a.text)) parts.push(["-advice", "What may help", adviceSection]);
			toc.push({ id: key, title: deviceTitle(dev, run), kids: parts.map(([id, title]) => ({ id: key + id, title })) });
			return { dev, key, parts };
		});
		if (obj(run.ranks)) toc.unshift({ id: "ranks", title: "Ranks" });
		if (obj(data.compare)) toc.push({ id: "compare", title: "Against BASE" });
		toc.push({ id: "run", title: "The run" });
		header(app, data, run, toc);
		if (obj(run.ranks)) section(app, "ranks", "Ranks", (sec) => ranksSection(sec, run));
		for (const { dev, key, parts } of plan)
			section(app, key, deviceTitle(dev, run), (sec) => {
				if (traceOf(dev, run).cmdline) sec.appendChild(h("p", { class: "cmd" }, h("code", null, traceOf(dev, run).cmdline)));
				sec.appendChild(summaryTable(dev));
				for (const [id, title, build] of parts) section(sec, key + id, title, (s) => build(s, dev, key), 3);
			});
		if (obj(data.compare)) section(app, "compare", "Against BASE", (sec) => compareSection(sec, data));
		section(app, "run", "The run", (sec) => runSection(sec, data, run));
	}

	window.addEventListener("error", (ev) => selftest.errors.push("uncaught: " + ev.message));
	const app = document.getElementById("app") || document.body.appendChild(h("div", { id: "app" }));
	document.body.appendChild(tip);
	guard(app, "page", () => render(app));
	let pending = 0;
	window.addEventListener("resize", () => {
		cancelAnimationFrame(pending);
		pending = requestAnimationFrame(() => resizers.forEach((fn) => guard(app, "resize", fn)));
	});
	// uPlot draws in microtasks of its own, queued before this one
	queueMicrotask(() => {
		selftest.ready_ms = Math.round(performance.now());
		const out = document.body.appendChild(h("pre", { id: "gpuprof-selftest", hidden: true }));
		out.textContent = JSON.stringify(selftest);
		document.documentElement.dataset.gpuprofReady = "1";
	});
})();
