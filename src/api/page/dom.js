// @ts-check
// Small DOM helpers of the page. Every value from the API is inserted as text (textContent,
// never innerHTML): a task's detail string is data, never markup.

/**
 * @param {string} id
 * @returns {any} the element (the page's own markup: the id exists)
 */
export const byId = (id) => document.getElementById(id);

/**
 * An element with text content and optional class names; never parses markup.
 * @param {string} tag
 * @param {unknown} [text]
 * @param {string} [className]
 * @returns {HTMLElement}
 */
export function el(tag, text, className) {
  const node = document.createElement(tag);
  if (text !== undefined && text !== null) node.textContent = String(text);
  if (className) node.className = className;
  return node;
}

/** What each container shows, so that a refresh that changes nothing leaves it alone. */
const shown = new Map();

/**
 * Replaces a container's children only when `data` differs from what they show: rebuilding
 * them every two seconds would swap a button or link out from under a click in progress.
 * @param {Element} container
 * @param {unknown} data
 * @param {() => Node[]} build
 */
export function render(container, data, build) {
  const key = JSON.stringify(data);
  if (shown.get(container) === key) return;
  shown.set(container, key);
  container.replaceChildren(...build());
}

/**
 * Empties a container and forgets what it showed, so that the next render fills it.
 * @param {Element} container
 */
export function clear(container) {
  container.replaceChildren();
  shown.delete(container);
}

/**
 * @param {string} text
 * @param {(event: MouseEvent) => void} onClick
 * @param {string} [className]
 * @returns {HTMLButtonElement}
 */
export function button(text, onClick, className) {
  const node = /** @type {HTMLButtonElement} */ (el('button', text, className));
  node.type = 'button';
  node.addEventListener('click', onClick);
  return node;
}

/**
 * The refresh line: when the page last heard from the API, or why it could not.
 * @param {string} text
 */
export function setStatus(text, isError = false) {
  const status = byId('status');
  status.textContent = text;
  status.classList.toggle('error', isError);
}

/**
 * The answer to the user's last action (a cancel); stays until the next one.
 * @param {string} text
 */
export function setMessage(text, isError = false) {
  const message = byId('message');
  message.textContent = text;
  message.classList.toggle('error', isError);
}

/** @param {unknown} error */
export function errorText(error) {
  const e = /** @type {{ code?: unknown, message?: unknown }} */ (error);
  if (error instanceof Error && typeof e.code === 'string') return e.code + ': ' + error.message;
  return error instanceof Error ? error.message : String(error);
}

/**
 * A two-column table body: one row per [key, name, value], the row's data-key set to key.
 * @param {Array<[string, string, string]>} rows
 */
export function figureRows(rows) {
  return rows.map(([key, name, value]) => {
    const row = el('tr');
    row.dataset.key = key;
    row.append(el('th', name), el('td', value));
    return row;
  });
}
