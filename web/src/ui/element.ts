/**
 * A tiny hyperscript for building DOM without a framework: `h('p', { class: 'note' }, 'text', child)`.
 * Text is always set as text (never parsed as HTML), so values from the server cannot inject markup.
 */
export type Child = Node | string | number | null | undefined | false;
export type Attributes = Record<string, string | number | boolean | null | undefined | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Array<Child | Child[]>
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === null || value === undefined || value === false) continue;
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else element.setAttribute(name, String(value));
  }
  append(element, children);
  return element;
}

function append(parent: Node, children: Array<Child | Child[]>): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
  }
}

/** Replaces everything inside `parent` with `children`. */
export function replaceChildren(parent: Element, ...children: Array<Child | Child[]>): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A table's header row: one column header (`scope=col`) per label. */
export function tableHead(labels: readonly string[]): HTMLTableSectionElement {
  return h(
    'thead',
    {},
    h(
      'tr',
      {},
      labels.map((label) => h('th', { scope: 'col' }, label)),
    ),
  );
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`the page has no #${id}`);
  return element as T;
}

/** Offers `content` as a file download without a round trip to the server. */
export function downloadText(fileName: string, content: string, type = 'application/json'): void {
  const url = URL.createObjectURL(new Blob([content], { type }));
  const link = h('a', { href: url, download: fileName, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

/** A button that copies `text()` to the clipboard and says so for a moment. */
export function copyButton(label: string, text: () => string, attributes: Attributes = {}): HTMLButtonElement {
  const button = h('button', { type: 'button', class: 'secondary', ...attributes }, label);
  button.addEventListener('click', async () => {
    try {
      await navigator.clipboard.writeText(text());
      button.textContent = 'Copied';
    } catch {
      button.textContent = 'Copy failed: select the text and copy it';
    }
    setTimeout(() => (button.textContent = label), 2000);
  });
  return button;
}
