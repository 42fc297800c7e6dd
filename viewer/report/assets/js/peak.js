/* A device's peak: what held the memory then. */
import { isNum, obj, objs } from "./text.js";
import { add, h, heading, muted, para } from "./dom.js";
import { bytes, int, orDash, pct, phaseLabel, when } from "./format.js";
import { phaseColor } from "./style.js";
import { guard } from "./sections.js";
import { categoryBar, layerTable, lineTable, stackedBar, topTable } from "./tables.js";
import { icicle } from "./icicle.js";
import { collectivesLine } from "./collectives.js";

export function peakSection(sec, dev, key) {
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
