/* Text from the data made safe to show, and the checks every section makes of
 * the data's members (untrusted: any member may be absent or of another type).
 * Needs no DOM. */

/* --- text --- */

// C0/C1 controls, DEL, bidi controls, the line and paragraph separators
// (U+2028/9: invisible, they would hide what is between), and unpaired
// surrogates (the u flag makes [\uD800-\uDFFF] match only those left
// unpaired)
const UNSAFE = /[\u0000-\u001F\u007F-\u009F\u061C\u200E\u200F\u2028-\u202E\u2066-\u2069\uD800-\uDFFF]/gu;

/** A value as text, what hides or reorders text escaped (\x1B, \u202E). */
export function safe(value) {
	return String(value).replace(UNSAFE, (ch) => {
		const c = ch.codePointAt(0);
		const hex = c.toString(16).toUpperCase();
		return c < 0x20 || c === 0x7f ? "\\x" + hex.padStart(2, "0") : "\\u" + hex.padStart(4, "0");
	});
}

export const isNum = (v) => typeof v === "number" && isFinite(v);
export const arr = (v) => (Array.isArray(v) ? v : []);
export const obj = (v) => (v && typeof v === "object" && !Array.isArray(v) ? v : null);
export const objs = (v) => arr(v).filter(obj);
export const sumOf = (list, key) => list.reduce((s, x) => s + (isNum(x && x[key]) ? x[key] : 0), 0);
