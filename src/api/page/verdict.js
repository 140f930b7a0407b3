// @ts-check
// What a job's result says, as text, for the job list and the job panel.

/**
 * What a job's result says, as text: a grade's or baseline's verdict, a baseline's or validate
 * job's validity, the image identity, and a validate job's problems.
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
  };
}

/** `FAIL · quarantined`, `PASS`, or a validate job's `valid` alone. */
/** @param {{ verdict: string, validity: string }} v */
export function verdictText(v) {
  return [v.verdict, v.validity].filter(Boolean).join(' · ');
}
