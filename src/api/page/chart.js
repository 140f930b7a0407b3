// @ts-check
// The resolved-rate chart: one point per batch at its resolved rate over scored tasks, with a
// whisker over its Wilson 95 % interval, drawn as inline SVG by this code alone (no library,
// nothing fetched). Every label is set as text.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 240;
const LEFT = 44;
const RIGHT = 12;
const TOP = 12;
const BOTTOM = 44;

/**
 * @param {string} tag
 * @param {Record<string, string | number>} attributes
 * @param {string} [text]
 */
function svg(tag, attributes, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** @param {string} text */
const short = (text) => (text.length > 14 ? text.slice(0, 13) + '…' : text);

/**
 * The chart of `points` (oldest first); `selected` names the batch drawn highlighted.
 * @param {Array<{ batch: string, label: string, rate: number, low: number, high: number }>} points
 * @param {string | null} selected
 * @returns {SVGSVGElement}
 */
export function rateChart(points, selected) {
  const root = /** @type {SVGSVGElement} */ (
    svg('svg', {
      viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
      role: 'img',
      class: 'chart',
      'aria-label': 'resolved rate per batch with 95 % intervals',
    })
  );
  const plotHeight = HEIGHT - TOP - BOTTOM;
  const y = (/** @type {number} */ rate) => TOP + (1 - rate) * plotHeight;
  for (const tick of [0, 0.25, 0.5, 0.75, 1]) {
    root.append(
      svg('line', { x1: LEFT, x2: WIDTH - RIGHT, y1: y(tick), y2: y(tick), class: 'grid' }),
      svg(
        'text',
        { x: LEFT - 6, y: y(tick) + 4, 'text-anchor': 'end', class: 'tick' },
        `${tick * 100}%`,
      ),
    );
  }
  const step = (WIDTH - LEFT - RIGHT) / Math.max(points.length, 1);
  points.forEach((p, i) => {
    const x = LEFT + step * (i + 0.5);
    const group = svg('g', {
      class: 'point' + (p.batch === selected ? ' selected' : ''),
      'data-batch': p.batch,
    });
    group.append(
      svg(
        'title',
        {},
        `${p.label}: ${(100 * p.rate).toFixed(1)}% [${(100 * p.low).toFixed(1)}%, ${(100 * p.high).toFixed(1)}%]`,
      ),
      svg('line', { x1: x, x2: x, y1: y(p.high), y2: y(p.low), class: 'whisker' }),
      svg('line', { x1: x - 6, x2: x + 6, y1: y(p.high), y2: y(p.high), class: 'whisker' }),
      svg('line', { x1: x - 6, x2: x + 6, y1: y(p.low), y2: y(p.low), class: 'whisker' }),
      svg('circle', { cx: x, cy: y(p.rate), r: 4.5, class: 'dot' }),
      svg(
        'text',
        { x, y: HEIGHT - BOTTOM + 18, 'text-anchor': 'middle', class: 'label' },
        short(p.label),
      ),
    );
    root.append(group);
  });
  return root;
}
