/* The page's first screen: the answer before the detail. For a run
 * directory, the rank that runs out first and why; then each process,
 * the failing first: an out-of-memory error's request, what held the
 * memory then (category, layer, line) and the advice; a leak's rate, since
 * when, its layer and line; else the peak's largest holders and the room
 * left. Each from analyze's JSON, as its sections below say it. */
import { arr, isNum, obj, objs } from "./text.js";
import { h } from "./dom.js";
import { bytes, orDash, pct, plural, signed, stepsCompared, when } from "./format.js";
import { findDev } from "./tables.js";
import { deviceTitle } from "./device.js";
import { growthRate, leakHead } from "./leak.js";
import { askedFor } from "./oom.js";
import { firstOut } from "./ranks.js";

/* --- the answer --- */

/** The layer tree's innermost layers (no children), largest first, each
 * by its whole path (joiner: "." for modules, " > " for NVTX ranges, as
 * the icicle joins them): where a layer's bytes are its own. */
function leafLayers(nodes, n, joiner) {
	const out = [];
	const walk = (list, path) => {
		for (const node of objs(list)) {
			const name = path ? path + joiner + orDash(node.name) : orDash(node.name);
			if (objs(node.children).length) walk(node.children, name);
			else if (isNum(node.bytes) && node.bytes > 0) out.push({ name, bytes: node.bytes, share: node.share });
		}
	};
	walk(nodes, "");
	return out.sort((a, b) => b.bytes - a.bytes).slice(0, n);
}

/** "activations 6.0 GiB (45%), parameters ..." of the largest n. */
const shares = (list, key, n) => objs(list).slice(0, n).filter((x) => x.bytes > 0).map((x) => orDash(x[key]) + " " + bytes(x.bytes) + (isNum(x.share) ? " (" + pct(x.share) + ")" : "")).join(", ");
/** A set's holders: by category, layer and line, one line each. */
function holders(set, dev) {
	const lines = [];
	const cats = shares(set.by_category, "category", 3);
	if (cats) lines.push("by category: " + cats);
	const layers = leafLayers(set.by_layer, 2, dev.mode === "cuda" ? " > " : ".").map((x) => x.name + " " + bytes(x.bytes)).join(", ");
	if (layers) lines.push("by layer: " + layers);
	const line = objs(set.by_line).find((x) => isNum(x.line) && x.bytes > 0);
	if (line) lines.push("by line: " + orDash(line.name) + " " + bytes(line.bytes));
	return lines;
}

/** The failure to explain first: the fatal one, else the first not got past. */
const fatalOom = (dev) => objs(dev.ooms).find((o) => o.fatal) || (!obj(dev.oom_outcomes) && objs(dev.ooms).find((o) => !o.recovered));

function oomFinding(dev, o) {
	const lines = [askedFor(o, dev) + "; " + bytes(o.allocated) + " allocated" + (isNum(o.reserved) ? ", " + bytes(o.reserved) + " reserved" : "")];
	lines.push(...holders(o, dev).map((x) => "held then " + x));
	const advice = objs(o.advice).find((a) => a.text);
	if (advice) lines.push("what may help: " + advice.text);
	return { bad: true, head: "Out of memory: " + bytes(o.request) + " could not be had", lines };
}

function leakFinding(dev, leak) {
	const lines = ["grew at " + orDash(leak.grew) + " of " + orDash(stepsCompared(leak)) + " steps, from " + bytes(leak.live_first) + " to " + bytes(leak.live_last) +
		(isNum(leak.steps_until_full) ? "; the device is full in about " + leak.steps_until_full + " more steps at this rate" : "")];
	const surv = obj(leak.survivors);
	if (surv) lines.push(...holders(surv, dev).map((x) => "what stays " + x));
	return { bad: true, head: leakHead(leak), lines };
}

function peakFinding(dev) {
	const p = obj(dev.peak);
	if (!p) return { bad: false, head: "Nothing allocated", lines: [] };
	const s = obj(dev.summary) || {};
	const held = Math.max(...[obj(s.device_total) && s.device_total.peak, obj(s.reserved) && s.reserved.peak, p.bytes].filter(isNum));
	const room = isNum(dev.capacity) && dev.capacity > 0 ? "; room left at the peak: " + bytes(Math.max(0, dev.capacity - held)) + " of " + bytes(dev.capacity) +
		" (this process's device memory at most " + bytes(held) + ")" : "";
	return { bad: false, head: "Peak: " + bytes(p.bytes) + " " + orDash(p.what) + " at " + when(p) + room.replace(/^; /, ", "), lines: holders(p, dev).map((x) => "held " + x) };
}

/** What to say of a device: its failure, its leak or growth, else its peak. */
function deviceFinding(dev) {
	const o = fatalOom(dev);
	if (o) return oomFinding(dev, o);
	const leak = obj(dev.leak);
	if (leak && leak.verdict === "leak") return leakFinding(dev, leak);
	const grow = obj(dev.growth);
	if (grow)
		return { bad: true, head: "Growth: " + growthRate(grow) +
			(isNum(grow.next_peak) ? "; the next step peaks near " + bytes(grow.next_peak) : ""), lines: peakFinding(dev).lines };
	return peakFinding(dev);
}

function ranksFinding(run) {
	const k = run.ranks, why = obj(k.why), lines = [];
	if (why) {
		const top = (list) => objs(list).filter((x) => x.delta > 0).slice(0, 2).map((x) => orDash(x.name) + " " + signed(x.delta)).join(", ");
		lines.push("at its peak it holds " + signed(why.peak_delta) + " more than rank " + orDash(why.compared_with_rank));
		for (const [what, list] of [["by category", why.by_category], ["by layer", why.by_layer], ["by line", why.by_line]])
			if (top(list)) lines.push(what + ": " + top(list));
	}
	return { bad: k.first_out_by === "oom", head: firstOut(k), lines };
}

/** Devices in the order the answer and the page take them: the first out
 * rank's, then those that failed, then those that leak, then the rest. */
export function failingFirst(run) {
	const ranks = obj(run.ranks);
	const lead = ranks && findDev(run, objs(ranks.by_rank).find((r) => r.rank === ranks.first_out_rank));
	const rank = (d) => (d === lead ? 0 : fatalOom(d) ? 1 : obj(d.leak) && d.leak.verdict === "leak" ? 2 : obj(d.growth) ? 3 : 4);
	return objs(run.devices).map((dev, i) => [dev, i]).sort((a, b) => rank(a[0]) - rank(b[0]) || a[1] - b[1]);
}

const MAX_DEVICES = 4;

export function answerSection(parent, run) {
	const box = h("section", { id: "answer", class: "answer", "aria-label": "the answer" });
	const finding = (f, who) => box.appendChild(h("div", { class: "finding " + (f.bad ? "bad" : "good") },
		h("p", { class: "verdict " + (f.bad ? "bad" : "good") }, who ? who + ": " : "", f.head),
		f.lines.length ? h("ul", null, f.lines.map((x) => h("li", null, x))) : null));
	if (obj(run.ranks)) finding(ranksFinding(run));
	const devs = failingFirst(run);
	devs.slice(0, MAX_DEVICES).forEach(([dev], i) => {
		const f = deviceFinding(dev);
		// a healthy GPU after the first: its line alone (its detail is below)
		if (i > 0 && !f.bad) f.lines = [];
		finding(f, devs.length > 1 || obj(run.ranks) ? deviceTitle(dev, run) : null);
	});
	if (devs.length > MAX_DEVICES) box.appendChild(h("p", { class: "muted" }, plural(devs.length - MAX_DEVICES, "more GPU") + " of the run below."));
	if (!devs.length) box.appendChild(h("p", { class: "notice" }, "No device memory activity was recorded."));
	const notes = objs(run.traces).flatMap((t) => arr(t.notes)).filter((n) => /size cap|cut short|killed|dump/.test(n));
	if (notes.length) box.appendChild(h("ul", { class: "notes muted" }, notes.slice(0, 3).map((n) => h("li", null, n))));
	parent.appendChild(box);
	return box;
}
