/* Tables (sortable), label/value lists, layer and source-line tables, the
 * stacked bars of a whole. */
import { arr, isNum, obj, objs, sumOf } from "./text.js";
import { add, h, muted, swatch } from "./dom.js";
import { bytes, int, orDash, pct, phaseLabel, plural, secs } from "./format.js";
import { CATEGORY_COLOR, COLOR, PALETTE } from "./style.js";
import { noteChart } from "./sections.js";

/* --- tables --- */

/** The device of a summary that who ({pid, device}: a rank's row, a compared side) names. */
export const findDev = (doc, who) => who && objs(doc.devices).find((d) => d.pid === who.pid && d.device === who.device);
/** A column: label, the row's member (or a function of the row), how to
 * show it, whether a number (right-aligned, sorted largest first). */
export const col = (label, key, show, num) => ({ label, value: typeof key === "function" ? key : (r) => r[key], show: show || orDash, num });
const SHARE_COLS = [col("bytes", "bytes", bytes, 1), col("share", "share", pct, 1), col("allocations", "count", int, 1)];
const unknown = (v) => v == null || v === "–";

/** sortable: a click on a header sorts by it, again the other way;
 * unknown values last either way. */
export function table(columns, rows, sortable, cls) {
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
export function facts(pairs) {
	const dl = h("dl", { class: "facts" });
	for (const [label, value] of pairs) if (value !== undefined) add(dl, [h("dt", null, label), h("dd", null, value)]);
	return dl;
}

/** A layer tree (by_layer) as an indented table; a run of alike
 * siblings (the first's `alike`, SCHEMA.md) is one row, its label and
 * totals, and its first member's children once, as "each: ...". */
export function layerTable(nodes) {
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
export function lineTable(lines) {
	const name = col("source line", "name", (v, r) => {
		const stack = arr(r.stack).slice(1), lib = r.library_frames;
		if (!stack.length && !lib) return h("span", { title: r.file || null }, orDash(v));
		return h("details", null, h("summary", { title: r.file || null }, orDash(v)), h("ul", { class: "stack" },
			stack.map((f) => h("li", null, "called from ", f)), lib ? h("li", { class: "muted" }, plural(lib, "library frame") + " inside it, folded") : null));
	});
	return table([name].concat(SHARE_COLS), objs(lines), true);
}

/** The largest allocations; a column unknown in every row is left out. */
export function topTable(top) {
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
export function stackedBar(parent, id, parts, whole) {
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
export function categoryBar(parent, id, set) {
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
