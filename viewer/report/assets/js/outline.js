/* A flight recorder's trace: the outline of the whole run (analyze's
 * devices[].outline), each step's peak, the window of full events marked. */
import { isNum, obj, objs } from "./text.js";
import { add, heading, muted, para } from "./dom.js";
import { bytes, int, orDash, pct, secs } from "./format.js";
import { COLOR } from "./style.js";
import { col, table } from "./tables.js";
import { plot } from "./plot.js";
import { stepPoints } from "./timeline.js";

export function outlineSection(sec, dev, key) {
	const o = obj(dev.outline);
	if (!o) return;
	sec.appendChild(para("The flight recorder kept an outline of the whole run: steps " + orDash(o.first_step) + "–" + orDash(o.last_step) +
		", " + secs(o.begin_t) + " to " + secs(o.end_t) + (isNum(o.window_t) ? "; the full events (memory over time, the peak) begin at " +
			secs(o.window_t) : "") + (o.dump ? " (written at: " + o.dump + ")" : "") + "."));
	sec.appendChild(para("The run's peak: " + bytes(o.allocated_peak) + " allocated at " + secs(o.peak_t) +
		(o.peak_step ? ", step " + o.peak_step : ", before the first step mark") + "; reserved at most " + bytes(o.reserved_peak) +
		", device allocations at most " + bytes(o.device_peak) + "."));
	if (o.ooms) sec.appendChild(para("Failed allocations over the run: " + int(o.ooms) + " (the largest request " + bytes(o.oom_bytes) +
		"), the first in step " + orDash(o.first_oom_step) + "."));
	if (o.dropped_segments) sec.appendChild(muted("Before the window the ring let go " + int(o.dropped_segments) + " seconds of events (" +
		bytes(o.dropped_bytes) + "); the steps and the leak are the outline's, of the whole run."));
	const cols = [col("", "name"), col("bytes", "bytes", bytes, 1), col("share", "share", pct, 1)];
	if (objs(o.by_category).length) add(sec, [heading("At the run's peak, by category"), table(cols, objs(o.by_category), false)]);
	if (objs(o.by_layer).length) add(sec, [heading("By layer"), table(cols, objs(o.by_layer), false)]);
	outlineChart(sec, dev, o, key + "-outline");
}

/** Each step's peak and what was live at its mark, the steps of the
 * window's full events drawn again over them. */
function outlineChart(sec, dev, o, id) {
	const pts = stepPoints(dev, (s) => isNum(s.peak));
	if (pts.length < 2) return;
	const inWindow = (s) => isNum(o.window_t) && isNum(s.t) && s.t >= o.window_t;
	const data = [pts.map((s) => s.step), pts.map((s) => s.peak), pts.map((s) => (isNum(s.live) ? s.live : null))];
	const series = [{ label: "the step's peak", stroke: COLOR.peak }, { label: "live at the step mark", stroke: COLOR.allocated }];
	if (pts.some(inWindow)) {
		data.push(pts.map((s) => (inWindow(s) ? s.peak : null)));
		series.push({ label: "in the window of full events", stroke: COLOR.bad, width: 4, spanGaps: false });
	}
	plot(sec, { id, kind: "outline", xKind: "step", data, series, height: 260, fit: true });
}
