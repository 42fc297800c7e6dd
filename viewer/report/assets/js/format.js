/* Numbers, times and words as the text report writes them (analyze/units.h,
 * analyze/result.c): tests/report/js holds them to it, and report.formatting
 * to the C formatter digit for digit. Needs no DOM. */
import { isNum } from "./text.js";

/* --- numbers --- */

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** Bytes as the text report writes them (analyze/units.h): 7.25 KiB,
 * digit for digit: a whole count is rounded as C's printf rounds it (the
 * exact quotient, a tie to even: 1152 B is 1.12 KiB), where toFixed
 * would round a tie up (tests/report: formatting). */
export function bytes(v) {
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
export const signed = (v) => (isNum(v) && v > 0 ? "+" : "") + bytes(v);
export const secs = (t) => (isNum(t) ? t.toFixed(3) + " s" : "–");
/** A time axis' tick: as many decimals as the step between ticks has
 * (1.25 at a step of 0.25, not "1.3"), six at most. */
export function timeTick(v, incr) {
	if (!isNum(v)) return "–";
	let d = 0;
	const step = isNum(incr) && incr > 0 ? incr : 0.001;
	while (d < 6 && Math.abs(Math.round(step * 10 ** d) - step * 10 ** d) > 1e-6 * step * 10 ** d) d++;
	return v.toFixed(d) + " s";
}
export const duration = (t) => (t >= 1 ? t.toPrecision(3) + " s" : t >= 1e-3 ? +(t * 1e3).toPrecision(3) + " ms" : +(t * 1e6).toPrecision(3) + " µs");
export const pct = (share) => (isNum(share) ? (share * 100).toFixed(1) + "%" : "–");
export const int = (n) => (isNum(n) ? n.toLocaleString("en-US") : "–");
export const orDash = (v) => (v == null || v === "" ? "–" : v);
export const plural = (n, word) => n + " " + word + (n === 1 ? "" : "s");
// what the text report says of each outcome of a failed allocation
// (analyze/result.c, gp_an_oom_outcome_words), in the schema's order
export const OOM_OUTCOMES = [["fatal", "fatal (the program did not get past it)"],
	["later_steps", "got past by the program (it completed later steps)"],
	["caught", "caught inside a library, which went on"], ["retried", "retried by the allocator, which got the memory"]];
/** A failure that gets a card: the program did not get past it inside a
 * library (a summary without outcomes: every one). */
export const carded = (o) => typeof o.outcome !== "string" || o.outcome === "fatal" || o.outcome === "later_steps";
/** bytes, or undefined (a fact left out) where not known */
export const size = (v) => (isNum(v) ? bytes(v) : undefined);
/** A phase as the text report shows it (gp_an_phase_label, viewer/analyze/result/result.c): the schema's
 * "none" (made outside forward, backward, the optimizer's step and zero_grad) is "(no phase)". */
const PHASE_LABELS = { none: "(no phase)" };
export const phaseLabel = (p) => (typeof p === "string" && Object.prototype.hasOwnProperty.call(PHASE_LABELS, p) ? PHASE_LABELS[p] : p);
/** What each memory kind apart from the device's is (exporters/trace_format.def's GP_KIND meanings). */
export const KIND_MEANINGS = {
	device_static: "a module's device globals", managed: "managed (unified) memory", managed_static: "a module's managed globals",
	pinned_host: "page-locked host memory", pageable: "pageable host memory", array: "a CUDA array", unknown: "a kind CUPTI did not name",
};
/** "step 5", "before step 1", "after step 20": a step and its step_when
 * (gpuprof.analyze/1; analyze's text says it the same way). */
const STEP_WORD = { in: "step ", before: "before step ", after: "after step " };
export const stepText = (step, stepWhen) => (isNum(step) ? (STEP_WORD[stepWhen] || "step ") + step : null);
/** The steps a leak's verdict compared, each with the one before it (as
 * analyze's text counts them): grew + shrank + flat. */
export const stepsCompared = (leak) => ([leak.grew, leak.shrank, leak.flat].every(isNum) ? leak.grew + leak.shrank + leak.flat : null);
/** "1.234 s, step 5, backward" of anything with t, step, step_when, phase; no phase ("none") is not said. */
export const when = (m) => [secs(m.t), stepText(m.step, m.step_when), m.phase !== "none" && m.phase].filter(Boolean).join(", ");
