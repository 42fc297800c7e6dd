/* The collective calls (NCCL) around a moment, in words and in a table cell. */
import { isNum, obj, objs } from "./text.js";
import { orDash } from "./format.js";

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
export function collectivesLine(c, t, moment) {
	if (!obj(c)) return null;
	const during = objs(c.during);
	if (during.length)
		return "Collectives at " + moment + ": " + during.map((x) => collectiveText(x, t, true)).join("; ") +
			(c.during_left_out > 0 ? "; and " + c.during_left_out + " more" : "") + ".";
	return "Collectives at " + moment + ": none outstanding" + (obj(c.before) ? "; the last: " + collectiveText(c.before, t, false) : "") +
		(obj(c.after) ? "; the next: " + collectiveText(c.after, t, false) : "") + ".";
}

/** A ranks-table cell: "AllGather +1", "(after AllReduce)", "" without any. */
export function collectiveCell(c) {
	if (!obj(c)) return "";
	const during = objs(c.during), more = during.length ? during.length - 1 + (c.during_left_out || 0) : 0;
	if (during.length) return orDash(during[0].op) + (more ? " +" + more : "");
	return obj(c.before) ? "(after " + orDash(c.before.op) + ")" : "(none yet)";
}
