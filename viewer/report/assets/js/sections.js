/* The self-test that the page's tests read (pre#gpuprof-selftest), the
 * sections that show their own failure in place, the tooltip. */
import { h } from "./dom.js";

/* --- self-test, sections --- */

export const selftest = { charts: [], errors: [], labels: [], views: [], live: {} };
export const resizers = [];
export const syncGroups = {};
export const noteChart = (id, kind, series) => selftest.charts.push({ id, kind, series });
/** After the page is ready, what a click changed: the self-test written
 * again (main.js writes it first, at ready). */
export function selftestChanged() {
	const out = document.getElementById("gpuprof-selftest");
	if (out) out.textContent = JSON.stringify(selftest);
}

/** Run fn; an exception is shown in place and in the self-test. */
export function guard(where, id, fn) {
	try {
		fn();
	} catch (err) {
		const msg = (err && err.message) || String(err);
		selftest.errors.push(id + ": " + msg);
		where.appendChild(h("p", { class: "error" }, "This part could not be drawn: " + msg));
	}
}
/** A section (level 2, or 3 inside one) that build(section) fills. */
export function section(parent, id, title, build, level) {
	const sec = h("section", { id, class: level === 3 ? "sub" : "sec" }, h(level === 3 ? "h3" : "h2", null, title));
	parent.appendChild(sec);
	guard(sec, id, () => build(sec));
	return sec;
}

export const tip = h("div", { class: "tip", role: "tooltip" });
export function showTip(ev, lines) {
	tip.textContent = "";
	lines.forEach((line, i) => tip.appendChild(h("div", { class: i ? null : "tip-head" }, line)));
	tip.style.display = "block";
	const w = tip.offsetWidth;
	const x = ev.clientX + 14 + w > window.innerWidth ? ev.clientX - 14 - w : ev.clientX + 14;
	tip.style.left = Math.max(0, x + window.scrollX) + "px";
	tip.style.top = ev.clientY + window.scrollY + 14 + "px";
}
export const hideTip = () => (tip.style.display = "none");
