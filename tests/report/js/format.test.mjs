// format.js: numbers, times and words as the text report writes them.
// report.formatting holds bytes() to the C formatter (analyze/units.h) over
// a thousand counts; these are the cases to read.
import { test } from "node:test";
import assert from "node:assert/strict";
import * as f from "../../../viewer/report/assets/js/format.js";

test("bytes: units of 1024, 3 significant digits, as analyze/units.h", () => {
	const want = [[0, "0 B"], [1023, "1023 B"], [1024, "1.00 KiB"], [1536, "1.50 KiB"], [10 * 1024, "10.0 KiB"],
		[100 * 1024, "100 KiB"], [1023 * 1024 + 1023, "1024 KiB"], [2 ** 20, "1.00 MiB"], [7.25 * 2 ** 30, "7.25 GiB"],
		[2 ** 50, "1.00 PiB"], [2 ** 60, "1024 PiB"]];
	for (const [v, s] of want) assert.equal(f.bytes(v), s, String(v));
});

test("bytes: an exact tie rounded to even, as printf rounds the exact quotient", () => {
	assert.equal(f.bytes(1152), "1.12 KiB"); // 1.125
	assert.equal(f.bytes(1664), "1.62 KiB"); // 1.625
	assert.equal(f.bytes(1152 + 1), "1.13 KiB");
	assert.equal(f.bytes(1.375 * 1024), "1.38 KiB"); // 1.375: up, to even
});

test("bytes: negative with a minus sign, nothing known as a dash", () => {
	assert.equal(f.bytes(-1536), "−1.50 KiB");
	for (const v of [null, undefined, NaN, "1024", Infinity]) assert.equal(f.bytes(v), "–", String(v));
	// past 2^53 the count is not whole: rounded as a double
	assert.equal(f.bytes(2 ** 53 * 1.5), "12.0 PiB");
});

test("signed, size: a sign on growth; a fact left out where not known", () => {
	assert.equal(f.signed(2048), "+2.00 KiB");
	assert.equal(f.signed(-2048), "−2.00 KiB");
	assert.equal(f.signed(0), "0 B");
	assert.equal(f.size(2048), "2.00 KiB");
	assert.equal(f.size(null), undefined);
});

test("secs, duration, pct, int, orDash, plural", () => {
	assert.equal(f.secs(1.23456), "1.235 s");
	assert.equal(f.secs(undefined), "–");
	assert.equal(f.duration(12.345), "12.3 s");
	assert.equal(f.duration(0.0123), "12.3 ms");
	assert.equal(f.duration(0.0000125), "12.5 µs");
	assert.equal(f.pct(0.1234), "12.3%");
	assert.equal(f.pct("x"), "–");
	assert.equal(f.int(1234567), "1,234,567");
	assert.equal(f.int(null), "–");
	assert.equal(f.orDash(""), "–");
	assert.equal(f.orDash(null), "–");
	assert.equal(f.orDash(0), 0);
	assert.equal(f.plural(1, "step"), "1 step");
	assert.equal(f.plural(2, "step"), "2 steps");
});

test("phaseLabel: none is (no phase); a name from the data is itself, never a prototype's", () => {
	assert.equal(f.phaseLabel("none"), "(no phase)");
	assert.equal(f.phaseLabel("forward"), "forward");
	assert.equal(f.phaseLabel("toString"), "toString");
	assert.equal(f.phaseLabel("__proto__"), "__proto__");
	assert.equal(f.phaseLabel(null), null);
});

test("stepText, when: a step as analyze's text says it", () => {
	assert.equal(f.stepText(5, "in"), "step 5");
	assert.equal(f.stepText(1, "before"), "before step 1");
	assert.equal(f.stepText(20, "after"), "after step 20");
	assert.equal(f.stepText(3, "sideways"), "step 3");
	assert.equal(f.stepText(undefined, "in"), null);
	assert.equal(f.when({ t: 1.5, step: 2, step_when: "in", phase: "backward" }), "1.500 s, step 2, backward");
	assert.equal(f.when({ t: 1.5, phase: "none" }), "1.500 s");
});

test("stepsCompared: grew + shrank + flat, or nothing when one is missing", () => {
	assert.equal(f.stepsCompared({ grew: 5, shrank: 1, flat: 2 }), 8);
	assert.equal(f.stepsCompared({ grew: 5, shrank: 1 }), null);
});

test("carded: a failure gets a card unless the program got past it inside a library", () => {
	assert.deepEqual(f.OOM_OUTCOMES.map(([k]) => k), ["fatal", "later_steps", "caught", "retried"]);
	assert.equal(f.carded({ outcome: "fatal" }), true);
	assert.equal(f.carded({ outcome: "later_steps" }), true);
	assert.equal(f.carded({ outcome: "caught" }), false);
	assert.equal(f.carded({ outcome: "retried" }), false);
	assert.equal(f.carded({}), true); // a summary without outcomes
});

test("timeTick: the decimals the step between ticks needs", () => {
	assert.equal(f.timeTick(1.25, 0.25), "1.25 s"); // not "1.3 s"
	assert.equal(f.timeTick(1.5, 0.5), "1.5 s");
	assert.equal(f.timeTick(2, 1), "2 s");
	assert.equal(f.timeTick(20, 10), "20 s");
	assert.equal(f.timeTick(0.0125, 0.0025), "0.0125 s");
	assert.equal(f.timeTick(0.3, 0.1), "0.3 s"); // 0.1 is not exact in binary: still one decimal
	assert.equal(f.timeTick(1e-7, 1e-7), "0.000000 s"); // six at most
	assert.equal(f.timeTick(null, 1), "–");
});
