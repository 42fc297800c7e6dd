// Use a report page as a person would, through Chromium's DevTools protocol:
// hover, drag to zoom, Shift+drag to pan, double-click, the whole-device box,
// "zoom to the steps", a sort, an icicle zoom and back, a narrow window; print
// what the page shows after each and every console message or exception, and
// take screenshots (OUTPREFIX-NAME.png).
//   node --experimental-websocket interact.mjs /abs/PAGE.html OUTPREFIX
// (Node 22 has WebSocket without the flag.)
import { spawn } from "node:child_process";
import { writeFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [page, out] = process.argv.slice(2);
const port = 9000 + Math.floor(Math.random() * 500);
const profile = mkdtempSync(join(tmpdir(), "cdp"));
const chrome = spawn("chromium", ["--headless=new", "--no-sandbox", "--disable-gpu", `--remote-debugging-port=${port}`,
	`--user-data-dir=${profile}`, "--window-size=1400,1000", "about:blank"], { stdio: "ignore" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let targets;
for (let i = 0; i < 50; i++) {
	try { targets = await (await fetch(`http://127.0.0.1:${port}/json/list`)).json(); break; } catch { await sleep(200); }
}
const target = targets.find((t) => t.type === "page");
const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((r) => ws.addEventListener("open", r));
let id = 0;
const pending = new Map();
const problems = [];
ws.addEventListener("message", (ev) => {
	const msg = JSON.parse(ev.data);
	if (msg.id && pending.has(msg.id)) { pending.get(msg.id)(msg); pending.delete(msg.id); }
	if (msg.method === "Runtime.exceptionThrown") problems.push("exception: " + JSON.stringify(msg.params.exceptionDetails).slice(0, 400));
	if (msg.method === "Runtime.consoleAPICalled") problems.push("console." + msg.params.type + ": " + JSON.stringify(msg.params.args).slice(0, 300));
	if (msg.method === "Log.entryAdded") problems.push("log " + msg.params.entry.level + ": " + msg.params.entry.text);
});
const send = (method, params = {}) => new Promise((r) => { const i = ++id; pending.set(i, r); ws.send(JSON.stringify({ id: i, method, params })); });
const evaluate = async (expr) => (await send("Runtime.evaluate", { expression: expr, returnByValue: true })).result.result.value;
const shot = async (name) => {
	const r = await send("Page.captureScreenshot", { format: "png" });
	writeFileSync(`${out}-${name}.png`, Buffer.from(r.result.data, "base64"));
};
const mouse = (type, x, y, extra = {}) => send("Input.dispatchMouseEvent", Object.assign({ type, x, y, button: "left", clickCount: 1 }, extra));
const drag = async (x0, y0, x1, y1, modifiers = 0) => {
	await mouse("mouseMoved", x0, y0, { button: "none", modifiers });
	await mouse("mousePressed", x0, y0, { modifiers });
	for (let k = 1; k <= 8; k++) await mouse("mouseMoved", x0 + ((x1 - x0) * k) / 8, y0 + ((y1 - y0) * k) / 8, { modifiers, buttons: 1 });
	await mouse("mouseReleased", x1, y1, { modifiers });
};
const click = async (x, y, clickCount = 1) => {
	await mouse("mouseMoved", x, y, { button: "none" });
	await mouse("mousePressed", x, y, { clickCount });
	await mouse("mouseReleased", x, y, { clickCount });
};

await send("Runtime.enable");
await send("Log.enable");
await send("Page.enable");
await send("Emulation.setDeviceMetricsOverride", { width: 1400, height: 1000, deviceScaleFactor: 1, mobile: false });
await send("Page.navigate", { url: "file://" + page });
for (let i = 0; i < 50 && (await evaluate("document.documentElement.dataset.gpuprofReady")) !== "1"; i++) await sleep(100);
console.log("selftest:", await evaluate("document.getElementById('gpuprof-selftest').textContent"));

// scroll the timeline into view; its overlay box in viewport coordinates
const box = async (sel) => evaluate(`(() => { const e = document.querySelector(${JSON.stringify(sel)}); if (!e) return null; e.scrollIntoView({block: "center"}); const r = e.getBoundingClientRect(); return {x: r.x, y: r.y, w: r.width, h: r.height}; })()`);
const axisText = () => evaluate(`[...document.querySelectorAll("#dev0-timeline .u-legend .u-value")].map(e => e.textContent).join(" | ")`);
let b = await box("#dev0-timeline .u-over");
if (b) {
	await mouse("mouseMoved", b.x + b.w * 0.5, b.y + b.h * 0.5, { button: "none" });
	await sleep(100);
	console.log("hover legend:", await axisText());
	console.log("hover info:", await evaluate(`document.querySelector(".hover-info").textContent`));
	await shot("hover");
	await drag(b.x + b.w * 0.6, b.y + b.h * 0.5, b.x + b.w * 0.8, b.y + b.h * 0.5);
	await sleep(150);
	await mouse("mouseMoved", b.x + b.w * 0.5, b.y + b.h * 0.5, { button: "none" });
	await sleep(50);
	console.log("after zoom, legend at middle:", await axisText());
	await shot("zoomed");
	b = await box("#dev0-timeline .u-over");
	await drag(b.x + b.w * 0.5, b.y + b.h * 0.5, b.x + b.w * 0.3, b.y + b.h * 0.5, 8 /* shift */);
	await sleep(150);
	await mouse("mouseMoved", b.x + b.w * 0.5, b.y + b.h * 0.5, { button: "none" });
	console.log("after pan, legend at middle:", await axisText());
	await shot("panned");
	const fb = await box("#dev0-frag .u-over");
	if (fb) await shot("frag-synced");
	b = await box("#dev0-timeline .u-over");
	await click(b.x + b.w * 0.5, b.y + b.h * 0.5, 1);
	await click(b.x + b.w * 0.5, b.y + b.h * 0.5, 2);
	await mouse("dblclick", b.x + b.w * 0.5, b.y + b.h * 0.5);
	await sleep(150);
	await shot("reset");
	// the whole device
	const cb = await box("#dev0-time input[type=checkbox]");
	if (cb) { await click(cb.x + 5, cb.y + 5); await sleep(100); b = await box("#dev0-timeline .u-over"); await shot("whole"); }
	const zb = await box("#dev0-time .controls button");
	if (zb) { await click(zb.x + 5, zb.y + 5); await sleep(100); await box("#dev0-timeline .u-over"); await shot("steps"); }
}
// sort the largest allocations by "made at", twice
const th = await evaluate(`(() => { const b = [...document.querySelectorAll("table.top th button")].find(b => b.textContent === "made at"); if (!b) return null; b.scrollIntoView({block: "center"}); const r = b.getBoundingClientRect(); return {x: r.x + 5, y: r.y + 5}; })()`);
if (th) {
	const firstRow = () => evaluate(`[...document.querySelector("table.top tbody tr").children].map(td => td.textContent).join(" | ")`);
	await click(th.x, th.y);
	console.log("sorted by made at:", await firstRow(), await evaluate(`[...document.querySelectorAll("table.top th")].map(t => t.getAttribute("aria-sort")).join(",")`));
	await click(th.x, th.y);
	console.log("sorted again:", await firstRow());
}
// icicle: click the widest node of the second row, then the crumb back
const node = await evaluate(`(() => { const gs = [...document.querySelectorAll("#dev0-icicle g.node")]; const g = gs[1]; if (!g) return null; g.scrollIntoView({block: "center"}); const r = g.getBoundingClientRect(); return {x: r.x + 10, y: r.y + 10, n: gs.length}; })()`);
if (node) {
	await mouse("mouseMoved", node.x, node.y, { button: "none" });
	console.log("icicle tip:", await evaluate(`document.querySelector(".tip").textContent`));
	await click(node.x, node.y);
	await sleep(50);
	console.log("icicle zoomed, crumbs:", await evaluate(`document.querySelector(".crumbs").textContent`), "nodes:", await evaluate(`document.querySelectorAll("#dev0-icicle g.node").length`));
	await shot("icicle");
	const crumb = await evaluate(`(() => { const b = document.querySelector(".crumbs button"); const r = b.getBoundingClientRect(); return {x: r.x + 3, y: r.y + 3}; })()`);
	await click(crumb.x, crumb.y);
	console.log("icicle back, crumbs:", await evaluate(`document.querySelector(".crumbs").textContent`));
}
// resize
await send("Emulation.setDeviceMetricsOverride", { width: 800, height: 1000, deviceScaleFactor: 2, mobile: false });
await sleep(300);
await box("#dev0-timeline .u-over");
await shot("narrow");
console.log("problems:", problems.length ? problems : "none");
console.log("title:", await evaluate("document.title"));
ws.close();
chrome.kill();
await new Promise((r) => chrome.on("exit", r));
rmSync(profile, { recursive: true, force: true });
process.exit(0);
