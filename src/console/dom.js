/**
 * The one way the console builds its page. Words from the API (a model
 * wrote most of them) only ever become text nodes or attribute values,
 * never markup: there is no innerHTML anywhere in the console.
 */

/** Set as properties, so a form control's state is what the value says. */
const PROPERTIES = new Set(['checked', 'disabled', 'hidden', 'value']);

export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null) continue;
    if (key === 'text') node.textContent = String(value);
    else if (key === 'class') node.className = value;
    else if (key.startsWith('on')) node.addEventListener(key.slice(2), value);
    else if (PROPERTIES.has(key)) node[key] = value;
    else if (value !== false) node.setAttribute(key, value === true ? '' : String(value));
  }
  append(node, children);
  return node;
}

/** Appends nodes and strings (as text); null, undefined and false are skipped so callers can write conditions inline. */
export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function when(ms) {
  return ms ? new Date(ms).toLocaleString() : '';
}

export function ago(ms) {
  const s = Math.max(0, Math.round((Date.now() - ms) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** A status word as a badge whose class the stylesheet colours. */
export function badge(text, kind = text) {
  return el('span', { class: `badge badge-${String(kind).replace(/[^a-z_]/g, '')}`, text });
}

/** A line that says what went wrong, in the page. */
export function errorLine(text) {
  return el('p', { class: 'error', role: 'alert', text, hidden: !text });
}

/**
 * A model's long text (a root's report can be 256 KiB): the first part, and
 * a button that shows the rest. The page stays light and readable; nothing
 * is lost.
 */
export function longText(tag, props, text, limit = 4000) {
  if (text.length <= limit) return el(tag, { ...props, text });
  const node = el(tag, { ...props, text: `${text.slice(0, limit)}…` });
  const more = el('button', { type: 'button', class: 'link', text: `Show all ${text.length.toLocaleString()} characters` });
  more.addEventListener('click', () => {
    node.textContent = text;
    more.remove();
  });
  return el('div', { class: 'long-text' }, node, more);
}
