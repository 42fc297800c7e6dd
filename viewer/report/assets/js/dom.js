/* Elements made from the data: everything the data says enters the page as
 * text (textContent), attributes refuse URLs and handlers. */
import { safe } from "./text.js";

/* --- DOM --- */

/** Append children: nodes, or anything else as text. */
export function add(parent, kids) {
	for (const kid of kids.flat(Infinity))
		if (kid != null && kid !== false)
			parent.appendChild(kid instanceof Node ? kid : document.createTextNode(safe(kid)));
	return parent;
}

/** An element. props: class, on (listeners), style (through the CSSOM,
 * which the CSP allows), non-URL attributes; href only to our anchors. */
export function h(tag, props, ...kids) {
	const el = document.createElement(tag);
	for (const [key, val] of Object.entries(props || {})) {
		if (val == null || val === false) continue;
		if (key === "class") el.className = val;
		else if (key === "on") for (const ev in val) el.addEventListener(ev, val[ev]);
		else if (key === "style") Object.assign(el.style, val);
		else if ((key === "href" && !/^#[a-z0-9-]+$/.test(val)) || key === "src" || /^on/i.test(key)) throw new Error("refused " + key);
		else el.setAttribute(key, val === true ? "" : safe(val));
	}
	return add(el, kids);
}
export function svg(tag, attrs, ...kids) {
	const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
	for (const [key, val] of Object.entries(attrs || {})) el.setAttribute(key, safe(val));
	return add(el, kids);
}
export const para = (...kids) => h("p", null, ...kids);
export const muted = (...kids) => h("p", { class: "muted" }, ...kids);
export const heading = (text) => h("h4", null, text);
export const verdict = (good, text) => h("p", { class: "verdict " + (good ? "good" : "bad") }, text);
export const swatch = (color, cls) => h("span", { class: "swatch " + (cls || ""), style: { background: color } });
export const bulleted = (list) => h("ul", { class: "notes" }, list.map((t) => h("li", null, t)));
