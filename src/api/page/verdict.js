// @ts-check
// What a job's result says, as text, for the job list and the job panel.

/**
 * What a job's result says, as text: a grade's or baseline's verdict, a baseline's or validate
 * job's validity, the image identity, a validate job's problems, and how many hits the screen
 * of a grade's candidate had (null when it was not screened).
 * @param {any} job
 */
export function verdictOf(job) {
  const result = job.result && typeof job.result === 'object' ? job.result : {};
  const str = (/** @type {unknown} */ v) => (typeof v === 'string' ? v : '');
  const image = result.image && typeof result.image === 'object' ? result.image : {};
  return {
    verdict: str(result.verdict),
    validity: str(result.validity),
    reason: str(result.reason),
    detail: str(result.detail),
    image:
      image.portable === true
        ? str(image.reference)
        : str(image.imageId) && 'local_build ' + str(image.imageId),
    problems: Array.isArray(result.problems) ? result.problems.map(str).join('\n') : '',
    suspicious: suspiciousCount(result.suspicious),
  };
}

/** The hit count of a grade's screen record; null without one. */
/** @param {unknown} screen */
function suspiciousCount(screen) {
  if (!screen || typeof screen !== 'object') return null;
  const count = /** @type {{ count?: unknown }} */ (screen).count;
  return typeof count === 'number' && Number.isInteger(count) && count >= 0 ? count : null;
}

/** The badge a grade with screen hits gets: `suspicious` or `suspicious ×N`; null for none. */
/** @param {{ suspicious: number | null }} v */
export function suspiciousText(v) {
  if (v.suspicious === null || v.suspicious === 0) return null;
  return v.suspicious === 1 ? 'suspicious' : 'suspicious ×' + v.suspicious;
}

/** `FAIL · quarantined`, `PASS`, or a validate job's `valid` alone. */
/** @param {{ verdict: string, validity: string }} v */
export function verdictText(v) {
  return [v.verdict, v.validity].filter(Boolean).join(' · ');
}
