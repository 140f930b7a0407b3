'use strict';

// slugify turns a title into a URL slug: lower case letters and digits, words joined by
// single dashes, nothing at either end.
function slugify(title, { maxLength = 80 } = {}) {
  const words = String(title)
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((word) => word !== '');
  let slug = '';
  for (const word of words) {
    const next = slug === '' ? word : `${slug}-${word}`;
    if (next.length > maxLength) break;
    slug = next;
  }
  return slug;
}

module.exports = { slugify };
