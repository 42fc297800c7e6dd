// style.js: the charts' axes and colours.
import { test } from "node:test";
import assert from "node:assert/strict";
import { axisBytes, BYTE_INCRS, layoutLabels, phaseColor, withAlpha } from "../../../viewer/report/assets/js/style.js";

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

test("layoutLabels: no two labels of a row overlap, a taken span is kept clear, no room leaves a label out", () => {
	// three labels at one place: three rows; a fourth: none
	assert.deepEqual(layoutLabels([[0, 80], [0, 80], [0, 80], [0, 80]], 3), [1, 2, 3, 0]);
	// apart (4 px at least): one row
	assert.deepEqual(layoutLabels([[0, 80], [84, 160], [164, 200]], 3), [1, 1, 1]);
	assert.deepEqual(layoutLabels([[0, 80], [83, 160]], 3), [1, 2]);
	// the peak's label holds row 1 there
	assert.deepEqual(layoutLabels([[50, 120]], 3, [{ row: 1, x0: 100, x1: 200 }]), [2]);
	// many labels at random: whatever each gets, the rows never overlap
	let seed = 7;
	const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
	for (let round = 0; round < 200; round++) {
		const spans = Array.from({ length: 1 + Math.floor(rand() * 30) }, () => {
			const x = rand() * 1200;
			return [x, x + 20 + rand() * 100];
		});
		const rows = layoutLabels(spans, 3);
		for (let i = 0; i < spans.length; i++)
			for (let j = 0; j < i; j++)
				if (rows[i] && rows[i] === rows[j])
					assert.ok(spans[i][0] >= spans[j][1] + 4 || spans[j][0] >= spans[i][1] + 4, "labels " + j + " and " + i + " overlap in row " + rows[i]);
		// one left out only where every row crosses it
		spans.forEach((s, i) => {
			if (rows[i]) return;
			for (let row = 1; row <= 3; row++)
				assert.ok(spans.some((t, j) => j < i && rows[j] === row && s[0] < t[1] + 4 && t[0] < s[1] + 4), "label " + i + " had room in row " + row);
		});
	}
});
