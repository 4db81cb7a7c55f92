// Runs the page's script (web/static/app.js) in Node against a minimal DOM built from index.html's ids
// and a scripted server, then prints what the page shows. Used by tests/web/test_page_assets.py where
// no browser is installed:
//
//   node tests/web/page_harness.js scenario.json      # {"html", "script", "responses": {path: [body…]}, "steps": […]}
//
// Steps: ["start"], ["restore"], ["provenance"], ["open-epidoc"], ["type", text]. Output: one JSON
// object, element id -> {hidden, text} for the ids asked in "show", and "fetched" (the paths asked).
"use strict";
const fs = require("fs");
const vm = require("vm");

const scenario = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));

class Node {}
class TextNode extends Node {
  constructor(text) { super(); this.data = String(text); }
  get textContent() { return this.data; }
}
class Element extends Node {
  constructor(tag) {
    super();
    this.tagName = tag.toUpperCase();
    this.children = [];
    this.attributes = {};
    this.listeners = {};
    this.hidden = false;
    this.value = "";
    this.checked = false;
    this.disabled = false;
    this.className = "";
    this.dataset = {};
    this.style = {};
    this.files = [];
  }
  get id() { return this.attributes.id || ""; }
  get textContent() { return this.children.map((c) => c.textContent).join(""); }
  set textContent(text) { this.children = [new TextNode(text)]; }
  setAttribute(key, value) { this.attributes[key] = String(value); }
  addEventListener(type, fn) { (this.listeners[type] = this.listeners[type] || []).push(fn); }
  append(...nodes) { for (const n of nodes) this.children.push(n instanceof Node ? n : new TextNode(n)); }
  replaceChildren(...nodes) { this.children = []; this.append(...nodes); }
  querySelector() { return null; }
  querySelectorAll() { return []; }
  focus() {}
  scrollIntoView() {}
  setSelectionRange() {}
  *walk() { yield this; for (const c of this.children) if (c instanceof Element) yield* c.walk(); }
}

// the page's static elements: every id of index.html, with its tag, the textarea's text, hidden flags
const roots = [];
for (const m of scenario.html.matchAll(/<(\w+)([^>]*?)\sid="([^"]+)"([^>]*)>/g)) {
  const node = new Element(m[1]);
  node.setAttribute("id", m[3]);
  node.hidden = /\shidden(\s|$|>)/.test(m[2] + " " + m[4]);
  if (/\schecked/.test(m[2] + m[4])) node.checked = true;
  roots.push(node);
}
const byId = (id) => {
  for (const root of roots) for (const node of root.walk()) if (node.id === id) return node;
  return null;
};
const area = scenario.html.match(/<textarea id="leiden"[^>]*>([\s\S]*?)<\/textarea>/);
byId("leiden").value = area ? area[1] : "";
byId("k").value = "10";

const documentListeners = {};
const document = {
  body: new Element("body"),
  getElementById: byId,
  createElement: (tag) => new Element(tag),
  createTextNode: (text) => new TextNode(text),
  querySelectorAll: () => [],
  addEventListener: (type, fn) => { documentListeners[type] = fn; },
};

const fetched = [];
async function fetch(path, init) {
  fetched.push(path);
  const queue = scenario.responses[path] || [];
  const body = queue.length > 1 ? queue.shift() : queue[0];
  if (body === undefined) return { ok: false, status: 404, json: async () => ({}) };
  const status = body.__status || 200;
  return { ok: status < 400, status, json: async () => body };
}

const context = {
  document, fetch, Node, FormData, Blob, performance, setTimeout, console, AbortController,
  URL: { createObjectURL: () => "blob:x", revokeObjectURL: () => {} },
};
vm.createContext(context);
vm.runInContext(scenario.script, context);

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

(async () => {
  for (const [step, arg] of scenario.steps) {
    if (step === "start") await documentListeners.DOMContentLoaded();
    else if (step === "type") byId("leiden").value = arg;
    else if (step === "restore") for (const fn of byId("restore").listeners.click) await fn();
    else if (step === "provenance") for (const fn of byId("provenance").listeners.click) await fn();
    else if (step === "open-epidoc") {
      for (const fn of byId("epidoc-file").listeners.change) await fn({ target: { files: [{ name: "e.xml", text: async () => "<TEI/>" }] } });
    }
    for (let i = 0; i < 5; i++) await settle();
  }
  const out = { fetched };
  for (const id of scenario.show) {
    const node = byId(id);
    out[id] = node ? { hidden: node.hidden, text: node.textContent, title: node.attributes.title || "" } : null;
  }
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { console.error(err.stack || String(err)); process.exit(1); });
