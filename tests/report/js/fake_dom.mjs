// The little of the DOM that dom.js and tables.js use, for node: elements
// with attributes, style, listeners and children, text nodes, and a
// document; installed as globals before the modules are imported.
export class Node {
	constructor() {
		this.childNodes = [];
	}
	appendChild(kid) {
		this.childNodes.push(kid);
		return kid;
	}
	get textContent() {
		return this.childNodes.map((k) => k.textContent).join("");
	}
	set textContent(text) {
		this.childNodes = text === "" ? [] : [new Text(String(text))];
	}
}

class Text extends Node {
	constructor(data) {
		super();
		this.data = data;
	}
	get textContent() {
		return this.data;
	}
}

export class Element extends Node {
	constructor(tag, ns) {
		super();
		this.tagName = tag;
		this.namespaceURI = ns || "http://www.w3.org/1999/xhtml";
		this.attributes = {};
		this.style = {};
		this.listeners = {};
		this.className = "";
	}
	setAttribute(key, value) {
		this.attributes[key] = String(value);
	}
	getAttribute(key) {
		return key in this.attributes ? this.attributes[key] : null;
	}
	addEventListener(ev, fn) {
		(this.listeners[ev] ||= []).push(fn);
	}
	dispatch(ev) {
		for (const fn of this.listeners[ev] || []) fn({ type: ev });
	}
	/** The elements below of a tag, in document order. */
	all(tag) {
		const out = [];
		const walk = (el) => {
			for (const k of el.childNodes)
				if (k instanceof Element) {
					if (k.tagName === tag) out.push(k);
					walk(k);
				}
		};
		walk(this);
		return out;
	}
}

globalThis.Node = Node;
globalThis.document = {
	createElement: (tag) => new Element(tag),
	createElementNS: (ns, tag) => new Element(tag, ns),
	createTextNode: (text) => new Text(text),
	body: new Element("body"),
	getElementById: () => null,
};
