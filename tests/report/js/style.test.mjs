// style.js: the charts' axes and colours.
import { test } from "node:test";
import assert from "node:assert/strict";
import { axisBytes, BYTE_INCRS, phaseColor, withAlpha } from "../../../viewer/report/assets/js/style.js";

test("axisBytes: bytes without trailing zeros", () => {
	assert.equal(axisBytes(2 ** 30), "1 GiB");
	assert.equal(axisBytes(1.5 * 2 ** 30), "1.5 GiB");
	assert.equal(axisBytes(768 * 2 ** 20), "768 MiB");
	assert.equal(axisBytes(10 * 2 ** 20), "10 MiB");
	assert.equal(axisBytes(0), "0 B");
});

test("BYTE_INCRS: y ticks on powers of two", () => {
	assert.equal(BYTE_INCRS[0], 1);
	for (let i = 1; i < BYTE_INCRS.length; i++) assert.equal(BYTE_INCRS[i], 2 * BYTE_INCRS[i - 1]);
});

test("phaseColor: the schema's optimizer.step and a timeline's optimizer alike; no colour for no phase", () => {
	assert.equal(phaseColor("optimizer.step", 0.5), "rgba(22,163,74,0.5)");
	assert.equal(phaseColor("optimizer", 0.5), "rgba(22,163,74,0.5)");
	assert.equal(phaseColor("forward", 1), "rgba(37,99,235,1)");
	assert.equal(phaseColor("none", 1), null);
	assert.equal(withAlpha("#2563eb", 0.5), "#2563eb80");
});
