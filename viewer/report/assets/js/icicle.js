/* The layer tree as an icicle (d3-hierarchy's partition) on a canvas. */
import { isNum, objs, safe, sumOf } from "./text.js";
import { add, h, muted, svg } from "./dom.js";
import { bytes, pct, plural } from "./format.js";
import { hideTip, noteChart, resizers, showTip } from "./sections.js";
import { CATEGORY_COLOR, withAlpha } from "./style.js";
import { keyRow } from "./plot.js";

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

/** The whole label where it fits, else the name alone, cut as it must:
 * never a cut name followed by a cut size ("0 · 735 …"). */
function labelFor(label, name, width) {
	const whole = fitText(label, width);
	return whole === label ? label : fitText(name, width);
}

/** The layer tree as an icicle: depth down, bytes across. A node's bytes
 * hold its children's: d3 sums each one's own (bytes − its children's).
 * A click zooms into a node; on the top row, or the path above, out. */
export function icicle(parent, id, tree, joiner) {
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
	// by the category that holds most of a layer's bytes (SCHEMA.md, Node),
	// light enough for its text, lighter with depth; without categories
	// (cuda mode) a hue per top-level node; "(no module)" gray
	const byCategory = root.descendants().some((n) => n !== root && CATEGORY_COLOR[n.data.category]);
	root.children.forEach((c, i) => c.each((n) => (n.hue = (i * 47 + 215) % 360)));
	const colorOf = (n) => n === root ? "#cbd5e1"
		: byCategory && CATEGORY_COLOR[n.data.category] ? withAlpha(CATEGORY_COLOR[n.data.category], Math.max(0.28, 0.62 - n.depth * 0.08))
			: /^\(/.test(n.data.name) ? "hsl(215 14% " + Math.min(88, 62 + n.depth * 6) + "%)"
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
			const cat = n !== root && isNum(n.data.category_bytes) && n.data.bytes > 0 && typeof n.data.category === "string"
				? "mostly " + n.data.category + " (" + pct(n.data.category_bytes / n.data.bytes) + ")" : null;
			const lines = () => [n === root ? n.data.name : n.ancestors().reverse().slice(1).map(nameOf).join(joiner),
				bytes(n.data.bytes) + share + (n === root ? "" : " of what was live") + (cat ? " · " + cat : ""),
				(isNum(n.data.count) ? plural(n.data.count, "allocation") + " · " : "") + (n !== focus ? "click: zoom in" : n !== root ? "click: back out" : "")];
			pic.appendChild(svg("g", { class: "node", transform: "translate(" + x0.toFixed(2) + "," + row * ROW + ")" },
				svg("rect", { width: Math.max(0, w - 1).toFixed(2), height: ROW - 1, fill: colorOf(n) }),
				w > 24 ? svg("text", { x: 4, y: 16 }, labelFor(safe(label), safe(n.data.name), w - 8)) : null));
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
	if (byCategory) {
		const cats = Object.keys(CATEGORY_COLOR).filter((c) => root.descendants().some((n) => n !== root && n.data.category === c));
		parent.appendChild(keyRow(cats.map((c) => [withAlpha(CATEGORY_COLOR[c], 0.62), c])));
	}
	resizers.push(render);
	noteChart(id, "icicle", drawn);
}
