// The page's modules (viewer/report/assets/js/) as the bundle needs them:
// bundled, they share one scope, so a name used but not imported would still
// work in the page and fail as a module; these checks keep the imports
// honest. They read the code as words (strings, comments, regular
// expressions and property names left out); a module that declares a name
// itself (a parameter, a local) is taken to mean its own.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const DIR = join(ROOT, "viewer/report/assets/js");

/** The bundle's order: GPUPROF_REPORT_MODULES in viewer/report/CMakeLists.txt. */
function order() {
	const cm = readFileSync(join(ROOT, "viewer/report/CMakeLists.txt"), "utf8");
	const m = /set\(GPUPROF_REPORT_MODULES([^)]*)\)/.exec(cm);
	assert.ok(m, "CMakeLists.txt lists GPUPROF_REPORT_MODULES");
	return m[1].split(/\s+/).filter(Boolean);
}

const IMPORT = /^import \{ ([\w$, ]+) \} from "\.\/([a-z_]+)\.js";$/;
const DECL = /^(export )?(?:function|const|let) ([A-Za-z_$][\w$]*)/;

/** A module: its head's imports ({module: [names]}), its body, its top-level
 * names and which of them it exports. */
function load(name) {
	const text = readFileSync(join(DIR, name + ".js"), "utf8");
	const split = text.indexOf("\n\n");
	assert.ok(split > 0, name + ": an empty line after the head");
	const head = text.slice(0, split), body = text.slice(split + 2);
	const imports = {};
	for (const line of head.replace(/\/\*[\s\S]*?\*\//g, "").split("\n")) {
		if (!line.trim() || line.startsWith("//")) continue;
		const m = IMPORT.exec(line);
		assert.ok(m, name + ": the head holds comments and imports only: " + line);
		assert.ok(!(m[2] in imports), name + ": one import of " + m[2]);
		imports[m[2]] = m[1].split(", ");
	}
	const top = [], exported = [];
	for (const line of body.split("\n")) {
		const m = DECL.exec(line);
		if (!m) continue;
		top.push(m[2]);
		if (m[1]) exported.push(m[2]);
	}
	return { name, body, imports, top, exported, uses: uses(body), locals: locals(body) };
}

/** The words of code used as names: not in strings, comments, regular
 * expressions, nor after a dot or as an object literal's key. */
function uses(src) {
	const out = new Set();
	let prev = "", prevWord = "";
	for (let i = 0; i < src.length; ) {
		const c = src[i];
		if (src.startsWith("//", i)) { const j = src.indexOf("\n", i); i = j < 0 ? src.length : j; continue; }
		if (src.startsWith("/*", i)) { i = src.indexOf("*/", i) + 2; continue; }
		if (c === '"' || c === "'" || c === "`") {
			let j = i + 1;
			while (src[j] !== c) j += src[j] === "\\" ? 2 : 1;
			i = j + 1; prev = "s"; continue;
		}
		if (c === "/" && ("(,=:[!&|?{};+-*%<>~^".includes(prev) || prev === "" || prevWord === "return" || prevWord === "typeof")) {
			let j = i + 1, cls = false;
			for (; cls || src[j] !== "/"; j++) {
				if (src[j] === "\\") j++;
				else if (src[j] === "[") cls = true;
				else if (src[j] === "]") cls = false;
			}
			i = j + 1;
			while (/[a-z]/.test(src[i] || "")) i++;
			prev = "r"; continue;
		}
		const m = /^[A-Za-z_$][\w$]*/.exec(src.slice(i, i + 200));
		if (m) {
			const w = m[0], after = src.slice(i + w.length).trimStart();
			const isKey = after.startsWith(":") && (prev === "{" || prev === ",");
			if (prev !== "." && !isKey) out.add(w);
			i += w.length; prev = "w"; prevWord = w; continue;
		}
		if (!/\s/.test(c)) { prev = c; prevWord = ""; }
		i++;
	}
	return out;
}

/** Names a module declares below its top level: parameters and locals. */
function locals(src) {
	const found = new Set();
	const lists = [/function\s*[\w$]*\s*\(([^)]*)\)/g, /\(([^()]*)\)\s*=>/g, /([A-Za-z_$][\w$]*)\s*=>/g,
		/(?:const|let|var)\s+([A-Za-z_$][\w$]*)/g, /(?:const|let|var)\s*([[{][^=]*?[\]}])\s*(?:=|of|in)/g, /catch\s*\((\w+)\)/g];
	for (const re of lists)
		for (const m of src.matchAll(re))
			for (const w of m[1].replace(/=[^,]*/g, "").matchAll(/(?<![:.\w$])[A-Za-z_$][\w$]*/g)) found.add(w[0]);
	return found;
}

const names = order();
const mods = Object.fromEntries(names.map((n) => [n, load(n)]));

test("every module of assets/js/ is bundled, once, and main.js last", () => {
	const files = readdirSync(DIR).filter((f) => f.endsWith(".js")).map((f) => f.slice(0, -3)).sort();
	assert.deepEqual([...names].sort(), files);
	assert.equal(new Set(names).size, names.length);
	assert.equal(names[names.length - 1], "main");
});

test("each module parses as a module", () => {
	for (const n of names) execFileSync(process.execPath, ["--check", join(DIR, n + ".js")]);
});

test("a top-level name is declared by one module (the bundle is one scope)", () => {
	const owner = {};
	for (const m of Object.values(mods))
		for (const t of m.top) {
			assert.ok(!(t in owner), t + ": declared by " + owner[t] + " and " + m.name);
			owner[t] = m.name;
		}
});

test("imports name what the module imported from exports, and come before it in the bundle", () => {
	for (const m of Object.values(mods))
		for (const [from, list] of Object.entries(m.imports)) {
			assert.ok(from in mods, m.name + ": imports from " + from + ", which is not bundled");
			assert.ok(names.indexOf(from) < names.indexOf(m.name), m.name + ": imports from " + from + ", bundled after it");
			for (const x of list) assert.ok(mods[from].exported.includes(x), m.name + ": " + from + " exports no " + x);
		}
});

test("a module imports what it uses of the others, and nothing else", () => {
	const owner = {};
	for (const m of Object.values(mods)) for (const t of m.top) owner[t] = m.name;
	for (const m of Object.values(mods)) {
		const want = {};
		for (const w of m.uses)
			if (owner[w] && owner[w] !== m.name && !m.locals.has(w)) (want[owner[w]] ||= []).push(w);
		const got = Object.fromEntries(Object.entries(m.imports).map(([k, v]) => [k, [...v].sort()]));
		for (const k in want) want[k].sort();
		assert.deepEqual(got, want, m.name + ": its imports");
	}
});

test("an export is imported by another module", () => {
	const imported = new Set(Object.values(mods).flatMap((m) => Object.values(m.imports).flat()));
	for (const m of Object.values(mods))
		for (const x of m.exported) assert.ok(imported.has(x), m.name + ": exports " + x + ", which no module imports");
});
