/* gpuprof report's page: draws the inlined data (gpuprof.report/1: analyze's
 * JSON, analyze/SCHEMA.md, a timeline per device; with --base the base run
 * and compare's JSON) with uPlot and d3-hierarchy's partition.
 * The page's CSP allows no inline handler or style attribute, eval, network.
 * The data is untrusted (names come from the traced program): it reaches the
 * DOM only as text, control and bidi characters made visible as the text
 * report does (viewer/render/term.c). A section that throws says so in place
 * and in the self-test (pre#gpuprof-selftest); the others are still drawn. */
import { arr, obj, objs } from "./text.js";
import { h, verdict } from "./dom.js";
import { orDash } from "./format.js";
import { guard, resizers, section, selftest, tip } from "./sections.js";
import { deviceTitle, summaryTable, timeSection, traceOf } from "./device.js";
import { liveSection } from "./live.js";
import { answerSection, failingFirst } from "./answer.js";
import { outlineSection } from "./outline.js";
import { peakSection } from "./peak.js";
import { leakSection } from "./leak.js";
import { oomSection } from "./oom.js";
import { adviceSection, fragSection } from "./frag.js";
import { runSection } from "./run.js";
import { ranksSection } from "./ranks.js";
import { compareSection } from "./compare.js";

/* --- the page --- */

/** The answer first (answer.js), then what ran and the contents. */
function header(app, data, run, toc) {
	const head = h("header", { class: "top" }, h("h1", null, "gpuprof report"));
	if (obj(data.compare)) head.appendChild(verdict(data.compare.verdict === "ok", "Against BASE: " + orDash(data.compare.verdict)));
	guard(head, "answer", () => answerSection(head, run));
	const traces = objs(run.traces), shown = traces.slice(0, 4);
	for (const t of shown)
		head.appendChild(h("div", { class: "cmd" }, h("code", null, orDash(t.cmdline)), " ",
			h("span", { class: "muted" }, "(" + orDash(t.mode) + " mode, process " + orDash(t.pid) + (t.cut_short ? ", cut short" : "") + ")")));
	if (traces.length > shown.length) head.appendChild(h("p", { class: "muted" }, (traces.length - shown.length) + " more processes: The run, below."));
	const link = (item) => h("a", { href: "#" + item.id }, item.title);
	head.appendChild(h("nav", { class: "toc", "aria-label": "contents" }, h("h2", null, "Contents"), h("ol", null, toc.map((item) =>
		h("li", null, link(item), item.kids ? h("ol", null, item.kids.map((k) => h("li", null, link(k)))) : null)))));
	app.appendChild(head);
}

function render(app) {
	const data = JSON.parse(document.getElementById("gpuprof-data").textContent);
	if (!obj(data) || !obj(data.run)) throw new Error("the data has no run (schema " + orDash(obj(data) && data.schema) + ")");
	const run = data.run;
	// the plan first: the table of contents names what follows; the rank
	// that ran out first before the others
	const toc = [];
	const plan = failingFirst(run).map(([dev, i]) => {
		const key = "dev" + i;
		const parts = [["-time", "Memory over time", timeSection], ["-peak", "The peak", peakSection], ["-leak", "Growth between steps", leakSection]];
		if (arr(dev.moments).length) parts.splice(1, 0, ["-live", "Live memory per allocation", liveSection]);
		if (obj(dev.outline)) parts.unshift(["-outline", "The whole run (flight recorder)", outlineSection]);
		if (arr(dev.ooms).length || dev.oom_count > 0) parts.push(["-oom", "Out of memory", oomSection]);
		parts.push(["-frag", "Cache and fragmentation", fragSection]);
		if (objs(dev.advice).some((a) => a.text)) parts.push(["-advice", "What may help", adviceSection]);
		toc.push({ id: key, title: deviceTitle(dev, run), kids: parts.map(([id, title]) => ({ id: key + id, title })) });
		return { dev, key, parts };
	});
	if (obj(run.ranks)) toc.unshift({ id: "ranks", title: "Ranks" });
	if (obj(data.compare)) toc.push({ id: "compare", title: "Against BASE" });
	toc.push({ id: "run", title: "The run" });
	header(app, data, run, toc);
	if (obj(run.ranks)) section(app, "ranks", "Ranks", (sec) => ranksSection(sec, run));
	for (const { dev, key, parts } of plan)
		section(app, key, deviceTitle(dev, run), (sec) => {
			if (traceOf(dev, run).cmdline) sec.appendChild(h("p", { class: "cmd" }, h("code", null, traceOf(dev, run).cmdline)));
			sec.appendChild(summaryTable(dev));
			for (const [id, title, build] of parts) section(sec, key + id, title, (s) => build(s, dev, key), 3);
		});
	if (obj(data.compare)) section(app, "compare", "Against BASE", (sec) => compareSection(sec, data));
	section(app, "run", "The run", (sec) => runSection(sec, data, run));
}

window.addEventListener("error", (ev) => selftest.errors.push("uncaught: " + ev.message));
const app = document.getElementById("app") || document.body.appendChild(h("div", { id: "app" }));
document.body.appendChild(tip);
guard(app, "page", () => render(app));
let pending = 0;
window.addEventListener("resize", () => {
	cancelAnimationFrame(pending);
	pending = requestAnimationFrame(() => resizers.forEach((fn) => guard(app, "resize", fn)));
});
// uPlot draws in microtasks of its own, queued before this one
queueMicrotask(() => {
	selftest.ready_ms = Math.round(performance.now());
	// tables wider than the page leave columns out of sight (the tests:
	// none at 1400 px)
	selftest.wide_tables = Array.from(document.querySelectorAll(".table-wrap"), (w) => ({
		section: (w.closest("section") || {}).id || null, width: w.scrollWidth, room: w.clientWidth,
	})).filter((t) => t.width > t.room + 1);
	// where the answer lies on the page (the tests: within the first screen)
	const answer = document.getElementById("answer");
	if (answer) {
		const r = answer.getBoundingClientRect(), y = window.scrollY;
		selftest.answer = { top: Math.round(r.top + y), bottom: Math.round(r.bottom + y), width: window.innerWidth, height: window.innerHeight,
			verdicts: Array.from(answer.querySelectorAll(".verdict"), (v) => ({ text: v.textContent, bottom: Math.round(v.getBoundingClientRect().bottom + y) })) };
	}
	const out = document.body.appendChild(h("pre", { id: "gpuprof-selftest", hidden: true }));
	out.textContent = JSON.stringify(selftest);
	document.documentElement.dataset.gpuprofReady = "1";
});
