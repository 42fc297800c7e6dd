/* The allocator's cache and its fragmentation; the run's advice. */
import { isNum, obj, objs } from "./text.js";
import { h, para } from "./dom.js";
import { bytes, pct, plural, size, when } from "./format.js";
import { COLOR, withAlpha } from "./style.js";
import { facts } from "./tables.js";
import { keyRow, plot, vmark } from "./plot.js";
import { axisOf } from "./timeline.js";

/** The cache's fragmentation (summary.cache.fragmentation), one line. */
function splitLine(sp) {
	if (!sp || sp.known !== true) return undefined;
	if (!sp.segments) return "none: no segment was reserved while the cache held the bytes of the block it was made for";
	const w = obj(sp.worst);
	return plural(sp.segments, "segment") + " (" + bytes(sp.bytes) + ") reserved while the cache held enough free bytes for the block, in pieces too small" +
		(w ? "; worst at " + when(w) + ": " + bytes(w.cached) + " free for a block of " + bytes(w.block) : "") +
		(sp.expandable_segments ? " (expandable segments on)" : "");
}

export function fragSection(sec, dev, key) {
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
export function adviceSection(sec, dev) {
	const advice = objs(dev.advice).filter((a) => a.text);
	sec.appendChild(h("ul", { class: "advice" }, advice.map((a) => h("li", null, a.text))));
}
