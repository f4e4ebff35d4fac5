// DOM helpers. Everything that comes from a job (names, commands, logs, metric names)
// reaches the page through these as text nodes or attribute values, never as markup:
// nothing in the UI assigns innerHTML.

// el('a', {class: 'x', href: '/jobs/1', onclick: fn}, 'text', child, [more]) builds an element.
// Props: `class`, `text`, `on<event>` handlers, `hidden`/`disabled` booleans, any other
// name is set with setAttribute. Children: strings and numbers become text nodes;
// null, undefined and false are skipped; arrays are flattened.
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (value === null || value === undefined || value === false) continue;
    if (name === 'class') node.className = value;
    else if (name === 'text') node.textContent = String(value);
    else if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name === 'hidden' || name === 'disabled') node[name] = Boolean(value);
    else node.setAttribute(name, String(value));
  }
  append(node, children);
  return node;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// Replaces the children of node.
export function replace(node, ...children) {
  node.replaceChildren();
  return append(node, children);
}

// The URL when it is an absolute http(s) URL, else null: a job's board URL must never
// become a javascript: or data: link.
export function safeHttpUrl(text) {
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : null;
  } catch {
    return null;
  }
}
