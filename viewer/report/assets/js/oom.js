/* Failed allocations: each one's card, bar and holders, and their outcomes. */
import { isNum, obj, objs, sumOf } from "./text.js";
import { add, h, heading, muted, para, verdict } from "./dom.js";
import { bytes, carded, int, OOM_OUTCOMES, orDash, plural, size, when } from "./format.js";
import { COLOR } from "./style.js";
import { guard, noteChart, section } from "./sections.js";
import { categoryBar, facts, layerTable, lineTable, topTable } from "./tables.js";
import { keyRow } from "./plot.js";
import { collectivesLine } from "./collectives.js";
import { expandableSegments, segmentsView } from "./live.js";

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

export function oomSection(sec, dev, key) {
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

/** "Asked for 1.50 GiB with 816 MiB free of 2.00 GiB, at ...": a failed
 * request against the device (its card here, the answer). */
export const askedFor = (o, dev) => "Asked for " + bytes(o.request) + " with " + bytes(o.free) + " free of " +
	bytes(isNum(o.total) ? o.total : dev.capacity) + ", at " + when(o) + (o.layer ? ", in " + o.layer : "");

function oomOne(box, o, dev, id) {
	box.appendChild(verdict(false, askedFor(o, dev)));
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
	if (Array.isArray(o.segments)) guard(box, id + "-segments", () => segmentsView(box, o, o.request, expandableSegments(dev)));
}
