/* The ranks of a distributed job: which one runs out first, and why. */
import { arr, isNum, obj, objs } from "./text.js";
import { add, h, heading, muted, para, verdict } from "./dom.js";
import { bytes, int, orDash, pct, secs, signed, stepText } from "./format.js";
import { COLOR } from "./style.js";
import { col, facts, findDev, table } from "./tables.js";
import { collectiveCell, collectivesLine } from "./collectives.js";

/* --- the ranks of a distributed job --- */

/** "signal 15 (SIGTERM)": the Linux numbers the recorder finishes a trace for. */
function signalName(n) {
	const names = { 1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE", 11: "SIGSEGV", 15: "SIGTERM" };
	return "signal " + orDash(n) + (names[n] ? " (" + names[n] + ")" : "");
}

/** "Runs out first: rank 1 (how)": the ranks' verdict (their section,
 * the answer). */
export function firstOut(k) {
	const first = objs(k.by_rank).find((r) => r.rank === k.first_out_rank) || {};
	const how = k.first_out_by === "oom" ? "it ran out of memory first, at " + secs(first.first_oom_t) + (isNum(first.first_oom_step) ? ", " + stepText(first.first_oom_step, first.first_oom_step_when) : "")
		: k.first_out_by === "headroom" ? "the least room left on its GPU: " + bytes(first.headroom) + " of " + bytes(first.capacity)
			: "the largest peak";
	return "Runs out first: rank " + orDash(k.first_out_rank) + " (" + how + ")";
}

export function ranksSection(sec, run) {
	const k = run.ranks;
	const rows = objs(k.by_rank);
	const first = rows.find((r) => r.rank === k.first_out_rank) || {};
	const why = obj(k.why);
	const peakOf = (r) => obj((findDev(run, r) || {}).peak) || {};
	sec.appendChild(verdict(false, firstOut(k)));
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
