/* Growth between steps: the leak verdict, its chart and its survivors. */
import { isNum, obj, objs } from "./text.js";
import { add, heading, muted, para, verdict } from "./dom.js";
import { bytes, int, orDash, signed, stepsCompared } from "./format.js";
import { COLOR } from "./style.js";
import { guard } from "./sections.js";
import { layerTable, lineTable } from "./tables.js";
import { plot } from "./plot.js";
import { stepColumn, stepPoints } from "./timeline.js";

/** "+1.00 MiB per step since step 4": a leak's head (here and the answer). */
export const leakHead = (leak) => "Leak: " + signed(leak.rate_per_step) + " per step since step " + orDash(leak.since_step);
/** "×1.80 a step from step 3": growth's rate (here and the answer). */
export const growthRate = (grow) => "×" + (isNum(grow.factor_per_step) ? grow.factor_per_step.toFixed(2) : "–") + " a step from step " + orDash(grow.since_step);

export function leakSection(sec, dev, key) {
	const leak = obj(dev.leak) || {};
	const grow = obj(dev.growth);
	if (grow) {
		// each step's peak larger than the last, nothing left between steps
		sec.appendChild(verdict(false, "Growth, not a leak: each step's peak is larger than the last, " + growthRate(grow) +
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
	sec.appendChild(verdict(false, leakHead(leak) + " (grew at " + orDash(leak.grew) + " of " + orDash(stepsCompared(leak)) + " steps, fit R² " + (isNum(leak.r2) ? leak.r2.toFixed(3) : "–") + ")"));
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
