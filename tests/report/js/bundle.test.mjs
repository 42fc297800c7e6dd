// viewer/report/bundle.cmake: the page's one script from the modules, as its
// comment says: main.js's opening comment, then the modules' bodies in one
// function's scope, "export " dropped, each line one tab in. CTest names the
// built script (GPUPROF_REPORT_JS) and cmake (GPUPROF_CMAKE); without them
// those checks are skipped.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import vm from "node:vm";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const DIR = join(ROOT, "viewer/report/assets/js");
const BUNDLER = join(ROOT, "viewer/report/bundle.cmake");
const BUILT = process.env.GPUPROF_REPORT_JS;
const CMAKE = process.env.GPUPROF_CMAKE;

/** The script the modules (texts, in order) make, by the rule above. */
function expected(texts) {
	const bodies = texts.map((t) => t.slice(t.indexOf("\n\n") + 2).replace(/^export (function|const|let) /gm, "$1 ")
		.replace(/^(?=.)/gm, "\t"));
	const last = texts[texts.length - 1];
	const opening = last.slice(0, last.indexOf("*/") + 2);
	return opening + "\n(function () {\n\t\"use strict\";\n\n" + bodies.join("\n") + "})();\n";
}

function order() {
	const cm = readFileSync(join(ROOT, "viewer/report/CMakeLists.txt"), "utf8");
	return /set\(GPUPROF_REPORT_MODULES([^)]*)\)/.exec(cm)[1].split(/\s+/).filter(Boolean);
}

/** cmake -P bundle.cmake on the given module texts: [exit status, output, script]. */
function bundle(texts) {
	const dir = mkdtempSync(join(tmpdir(), "gpuprof-bundle."));
	try {
		const paths = texts.map((t, i) => {
			const p = join(dir, "m" + i + ".js");
			writeFileSync(p, t);
			return p;
		});
		const out = join(dir, "out.js");
		const r = spawnSync(CMAKE, ["-DMODULES=" + paths.join("|"), "-DOUT=" + out, "-P", BUNDLER], { encoding: "utf8" });
		let script = null;
		try { script = readFileSync(out, "utf8"); } catch { /* none written */ }
		return [r.status, r.stdout + r.stderr, script];
	} finally {
		rmSync(dir, { recursive: true, force: true });
	}
}

test("the built script is the modules bundled, and parses as a classic script", { skip: !BUILT && "GPUPROF_REPORT_JS (CTest sets it) names no built script" }, () => {
	const built = readFileSync(BUILT, "utf8");
	assert.equal(built, expected(order().map((n) => readFileSync(join(DIR, n + ".js"), "utf8"))));
	new vm.Script(built, { filename: BUILT });
	assert.doesNotMatch(built, /^\s*(import|export)\b/m);
});

const A = "/* a */\n\nexport const one = 1;\nexport function two() {\n\treturn one + 1;\n}\n";
const MAIN = "/* the page's script\n * says what it is */\nimport { one, two } from \"./a.js\";\n\n/* --- main --- */\n\nconst x = `${one}`;\nlet y = two();\n";

test("bundle.cmake: two modules", { skip: !CMAKE && "GPUPROF_CMAKE (CTest sets it) names no cmake" }, () => {
	const [rc, out, script] = bundle([A, MAIN]);
	assert.equal(rc, 0, out);
	assert.equal(script, "/* the page's script\n * says what it is */\n(function () {\n\t\"use strict\";\n\n" +
		"\tconst one = 1;\n\tfunction two() {\n\t\treturn one + 1;\n\t}\n\n\t/* --- main --- */\n\n\tconst x = `${one}`;\n\tlet y = two();\n})();\n");
	assert.equal(script, expected([A, MAIN]));
});

test("bundle.cmake refuses what it cannot bundle", { skip: !CMAKE && "GPUPROF_CMAKE (CTest sets it) names no cmake" }, () => {
	const bad = {
		"an import after the head": [A, "/* m */\n\nimport { one } from \"./a.js\";\nconst z = one;\n"],
		"export default": [A, "/* m */\n\nexport default 3;\n"],
		"export { }": [A, "/* m */\n\nconst q = 1;\nexport { q };\n"],
		"code in the head": ["/* a */\nconst early = 1;\n\nconst late = 2;\n", MAIN],
		"an import from elsewhere": [A, "/* m */\nimport { one } from \"https://example.com/a.js\";\n\nconst z = 1;\n"],
		"no empty line after the head": ["/* a */\nconst one = 1;\n", MAIN],
		"a last module without an opening comment": [A, "import { one } from \"./a.js\";\n\nconst z = one;\n"],
		"a module not ending in one newline": [A + "\n", MAIN],
	};
	for (const [why, texts] of Object.entries(bad)) {
		const [rc, out, script] = bundle(texts);
		assert.notEqual(rc, 0, why + ": refused (" + out + ")");
		assert.match(out, /m[01]\.js: /, why + ": names the module");
		assert.equal(script, null, why + ": no script written");
	}
});
