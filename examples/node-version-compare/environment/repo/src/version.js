// Dotted version strings such as "1.4.2" (an optional leading "v" is ignored).

/** The parts of a version, or a TypeError for anything that is not digits and dots. */
function parse(version) {
  const text = String(version).trim().replace(/^v/, '');
  if (!/^\d+(\.\d+)*$/.test(text)) {
    throw new TypeError(`invalid version: ${JSON.stringify(version)}`);
  }
  return text.split('.');
}

/**
 * Compares two versions: negative when a is older than b, 0 when they are the same version,
 * positive when a is newer. Missing parts count as 0, so "1.2" and "1.2.0" are equal.
 */
export function compareVersions(a, b) {
  const left = parse(a);
  const right = parse(b);
  for (let i = 0; i < Math.max(left.length, right.length); i += 1) {
    const x = left[i] ?? '0';
    const y = right[i] ?? '0';
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** The versions from oldest to newest, as a new array. */
export function sortVersions(versions) {
  return [...versions].sort(compareVersions);
}

/** The newest of the versions, or undefined for an empty list. */
export function maxVersion(versions) {
  return versions.reduce(
    (best, version) => (best === undefined || compareVersions(version, best) > 0 ? version : best),
    undefined,
  );
}
