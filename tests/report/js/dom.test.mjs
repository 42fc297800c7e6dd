// dom.js, and tables.js on it: what the data says enters the page as text,
// attributes refuse what could fetch or run; tables sort as they say.
// Under a small stand-in DOM (fake_dom.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import { Element } from "./fake_dom.mjs";

const M = "../../../viewer/report/assets/js/";
const { h, svg } = await import(M + "dom.js");
const { col, facts, layerTable, table } = await import(M + "tables.js");
const { bytes } = await import(M + "format.js");

test("h: children as text, made safe; null and false left out; arrays flattened", () => {
	const el = h("p", null, "a\u202Eb<i>", 3, null, false, ["x", ["y\x1b"]]);
	assert.equal(el.textContent, "a\\u202Eb<i>3xy\\x1B");
	assert.ok(el.childNodes.every((k) => !(k instanceof Element)), "text nodes only");
});

test("h: attributes made safe, class and style through the DOM, listeners attached", () => {
	let clicked = 0;
	const el = h("span", { title: "t\x07", class: "c", style: { background: "red" }, hidden: true, on: { click: () => clicked++ } });
	assert.equal(el.getAttribute("title"), "t\\x07");
	assert.equal(el.className, "c");
	assert.equal(el.style.background, "red");
	assert.equal(el.getAttribute("hidden"), "");
	el.dispatch("click");
	assert.equal(clicked, 1);
	assert.equal(svg("rect", { x: 1 }).namespaceURI, "http://www.w3.org/2000/svg");
});

test("h: refuses src, any on... attribute, and href but to an anchor of the page", () => {
	assert.equal(h("a", { href: "#dev0-peak" }).getAttribute("href"), "#dev0-peak");
	for (const props of [{ src: "x.js" }, { onclick: "alert(1)" }, { ONLOAD: "x" }, { href: "https://example.com" },
		{ href: "javascript:alert(1)" }, { href: "#a b" }])
		assert.throws(() => h("a", props), /refused/, JSON.stringify(props));
});

const rowsOf = (wrap) => wrap.all("tbody")[0].all("tr").map((tr) => tr.all("td").map((td) => td.textContent));

test("table: a click sorts by a column, numbers largest first, again the other way, unknown last", () => {
	const rows = [{ n: "b", v: 2048 }, { n: "a", v: null }, { n: "c", v: 10 * 2 ** 20 }, { n: "d", v: 1 }];
	const wrap = table([col("name", "n"), col("bytes", "v", bytes, 1)], rows, true);
	assert.deepEqual(rowsOf(wrap).map((r) => r[0]), ["b", "a", "c", "d"], "as given");
	const [byName, byBytes] = wrap.all("th");
	byBytes.all("button")[0].dispatch("click");
	assert.deepEqual(rowsOf(wrap), [["c", "10.0 MiB"], ["b", "2.00 KiB"], ["d", "1 B"], ["a", "–"]]);
	assert.equal(byBytes.getAttribute("aria-sort"), "descending");
	byBytes.all("button")[0].dispatch("click");
	assert.deepEqual(rowsOf(wrap).map((r) => r[0]), ["d", "b", "c", "a"]);
	assert.equal(byBytes.getAttribute("aria-sort"), "ascending");
	byName.all("button")[0].dispatch("click");
	assert.deepEqual(rowsOf(wrap).map((r) => r[0]), ["a", "b", "c", "d"]);
	assert.equal(byBytes.getAttribute("aria-sort"), "none");
	assert.deepEqual(rows.map((r) => r.n), ["b", "a", "c", "d"], "the data itself not reordered");
});

test("facts: a value undefined leaves its row out", () => {
	const dl = facts([["one", "1"], ["none", undefined], ["zero", 0]]);
	assert.deepEqual(dl.all("dt").map((x) => x.textContent), ["one", "zero"]);
	assert.deepEqual(dl.all("dd").map((x) => x.textContent), ["1", "0"]);
});

test("layerTable: a run of alike siblings is one row, the first one's children once as each:", () => {
	const block = (i) => ({ name: String(i), bytes: 10, share: 0.1, count: 1, children: [{ name: "attn", bytes: 6, share: 0.06, count: 1 }] });
	const blocks = [0, 1, 2].map(block);
	blocks[0].alike = { siblings: 3, label: "0-2 (3 alike, each 10 B)", bytes: 30, share: 0.3, count: 3 };
	const rows = rowsOf(layerTable([{ name: "<Net>", bytes: 40, share: 0.4, count: 4, children: blocks.concat([{ name: "head", bytes: 10 }]) }]));
	assert.deepEqual(rows.map((r) => r[0]), ["<Net>", "0-2 (3 alike, each 10 B)", "each: attn", "head"]);
	assert.deepEqual(rows[1].slice(1), ["30 B", "30.0%", "3"]);
});
