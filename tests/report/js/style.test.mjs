// style.js: the charts' axes and colours.
import { test } from "node:test";
import assert from "node:assert/strict";
import { axisBytes, BYTE_INCRS, eventAxis, layoutLabels, liveColumns, mostLive, phaseColor, stepAxis, stepsStart, withAlpha } from "../../../viewer/report/assets/js/style.js";

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

test("stepAxis: step N at its mark, linear between, a step at most beyond the ends", () => {
	assert.equal(stepAxis([], 0), null);
	// steps of 2 s from t=10 (step 1 began at 8), a slower step 3
	const x = stepAxis([{ step: 1, t: 10 }, { step: 2, t: 12 }, { step: 3, t: 16 }], 8);
	assert.equal(x(10), 1);
	assert.equal(x(12), 2);
	assert.equal(x(11), 1.5);
	assert.equal(x(14), 2.5); // half of the slower step
	assert.equal(x(9), 0.5); // step 1, from its beginning
	assert.equal(x(8), 0);
	assert.equal(x(0), -1); // no further than a step out
	assert.equal(x(18), 3.5); // the last step's pace
	assert.equal(x(100), 4);
	// marks kept 1 in 5: still steps
	const y = stepAxis([{ step: 5, t: 5 }, { step: 10, t: 10 }], null);
	assert.equal(y(7.5), 7.5);
	assert.equal(y(0), 4);
	// monotone on random marks
	let t = 0;
	const marks = Array.from({ length: 50 }, (_, i) => ({ step: i + 1, t: (t += 0.1 + (i % 7) * 0.3) }));
	const z = stepAxis(marks, null);
	for (let v = -1, u = 0; u < 20; u += 0.05) {
		assert.ok(z(u) >= v, "monotone at " + u);
		v = z(u);
	}
});

test("liveColumns: in event order, each its events wide; bands oldest first from the bottom, the rest above; bad data left out", () => {
	const bands = [{ bytes: 100, t: 2 }, { bytes: 50, t: 1 }, { bytes: 10, t: 3 }, "x", { t: 1 }];
	const moments = [
		{ first_event: 4, events: 4, from: 2, to: 3, t: 2.5, bytes: 170, live_bytes: 200, largest: [0, 1, 2, 3, 4, 9, -1, 1.5] },
		{ first_event: 0, events: 4, from: 0, to: 1, t: 0.5, bytes: 60, live_bytes: 60, largest: [1, 2] },
		{ first_event: 8, events: 0, from: 5, to: 6, t: 5.5, bytes: 10, live_bytes: 5, largest: [2] },
		{ first_event: 9, events: 4, from: 7, to: 8, live_bytes: null, largest: [] },
		{ from: 9, to: 10, t: 9.5, bytes: 1, live_bytes: 1, largest: [] },
		null,
	];
	const cols = liveColumns(moments, bands);
	// a column is at least one event wide
	assert.deepEqual(cols.map((c) => [c.x0, c.x1]), [[0, 4], [4, 8], [8, 9]]);
	assert.deepEqual(cols[0].stack, [{ band: 1, y0: 0, y1: 50 }, { band: 2, y0: 50, y1: 60 }]);
	assert.deepEqual(cols[0].rest, { y0: 60, y1: 60 });
	assert.deepEqual(cols[1].stack.map((s) => s.band), [1, 0, 2]);
	assert.deepEqual(cols[1].rest, { y0: 160, y1: 200 });
	// the bands never above what was alive: the rest is empty, not negative
	assert.deepEqual(cols[2].rest, { y0: 10, y1: 10 });
	assert.equal(mostLive(cols), 1);
	assert.equal(mostLive([]), -1);
	assert.deepEqual(liveColumns(undefined, []), []);
});

test("eventAxis: time to events linear inside a column, the boundary between columns, the ends outside; and back", () => {
	const cols = liveColumns([
		{ first_event: 0, events: 10, from: 1, to: 2, t: 1.5, bytes: 1, live_bytes: 1, largest: [] },
		{ first_event: 10, events: 10, from: 5, to: 5, t: 5, bytes: 1, live_bytes: 1, largest: [] },
		{ first_event: 20, events: 20, from: 6, to: 10, t: 7, bytes: 1, live_bytes: 1, largest: [] },
	], []);
	const ax = eventAxis(cols);
	assert.equal(ax.at(0), 0);
	assert.equal(ax.at(1.5), 5);
	assert.equal(ax.at(3), 10); // between the first two: the boundary
	assert.equal(ax.at(5), 20); // a column of one instant: its end
	assert.equal(ax.at(8), 30);
	assert.equal(ax.at(11), 40);
	assert.equal(ax.time(5), 1.5);
	assert.equal(ax.time(30), 8);
	assert.equal(ax.time(45), 10);
	assert.equal(ax.time(-3), 1);
	assert.equal(eventAxis([]), null);
});

test("stepsStart: on the steps after a long start, unless the peak or a failure lies before them", () => {
	// marks at 8, 9, 10: the steps from 7 (a step before the first mark)
	assert.equal(stepsStart([8, 9, 10], 0, 10, [9.5]), 7);
	assert.equal(stepsStart([8, 9, 10], 0, 10, [null, undefined, "x"]), 7);
	assert.equal(stepsStart([8, 9, 10], 0, 10, [3]), null);
	assert.equal(stepsStart([8, 9, 10], 0, 10, [9, 6.9]), null);
	// a short start (30% of the run at most), or fewer than two marks: the whole run
	assert.equal(stepsStart([2, 3, 10], 0, 10, []), null);
	assert.equal(stepsStart([8], 0, 10, []), null);
	assert.equal(stepsStart([], 0, 10, []), null);
});
