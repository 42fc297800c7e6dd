// text.js: what the page shows of a value, and its checks of untrusted members.
import { test } from "node:test";
import assert from "node:assert/strict";
import { arr, isNum, obj, objs, safe, sumOf } from "../../../viewer/report/assets/js/text.js";

test("safe: controls, DEL and C1 as \\x and \\u escapes, as the text report shows them", () => {
	assert.equal(safe("a\x1b[31mb\x07"), "a\\x1B[31mb\\x07");
	assert.equal(safe("\x00\x7f"), "\\x00\\x7F");
	assert.equal(safe("\u009b"), "\\u009B");
	assert.equal(safe("tab\there\nnl"), "tab\\x09here\\x0Anl");
});

test("safe: bidi controls and the line separators made visible", () => {
	assert.equal(safe("abc\u202Egnp.exe"), "abc\\u202Egnp.exe");
	assert.equal(safe("\u2066\u2069\u061C\u200E\u200F"), "\\u2066\\u2069\\u061C\\u200E\\u200F");
	assert.equal(safe("line\u2028sep\u2029"), "line\\u2028sep\\u2029");
});

test("safe: an unpaired surrogate escaped, a pair (one character) kept", () => {
	assert.equal(safe("x\uD800y"), "x\\uD800y");
	assert.equal(safe("\uDC00"), "\\uDC00");
	assert.equal(safe("😀 é ü 中"), "😀 é ü 中");
});

test("safe: any value as text", () => {
	assert.equal(safe(12), "12");
	assert.equal(safe(null), "null");
	assert.equal(safe("<b>&amp;</b>"), "<b>&amp;</b>");
});

test("isNum: finite numbers only", () => {
	for (const v of [0, -1.5, 1e300]) assert.equal(isNum(v), true, String(v));
	for (const v of [NaN, Infinity, -Infinity, "1", null, undefined, [], {}, 10n]) assert.equal(isNum(v), false, String(v));
});

test("arr, obj, objs: another type read as empty", () => {
	assert.deepEqual(arr([1, 2]), [1, 2]);
	assert.deepEqual(arr("ab"), []);
	assert.deepEqual(arr({ length: 2 }), []);
	const o = { a: 1 };
	assert.equal(obj(o), o);
	for (const v of [null, [], "x", 3, undefined]) assert.equal(obj(v), null);
	assert.deepEqual(objs([o, null, 3, "s", [1], o]), [o, o]);
	assert.deepEqual(objs(null), []);
});

test("sumOf: the numbers of a member, others counted as 0", () => {
	assert.equal(sumOf([{ b: 1 }, { b: 2.5 }, { b: "3" }, null, {}, { b: NaN }], "b"), 3.5);
	assert.equal(sumOf([], "b"), 0);
});
