import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compareVersions, maxVersion, sortVersions } from '../src/version.js';

test('equal versions compare as 0', () => {
  assert.equal(compareVersions('1.2.3', '1.2.3'), 0);
  assert.equal(compareVersions('1.2', '1.2.0'), 0);
  assert.equal(compareVersions('v1.2.3', '1.2.3'), 0);
});

test('orders by major, minor, then patch', () => {
  assert.ok(compareVersions('1.2.3', '1.2.4') < 0);
  assert.ok(compareVersions('1.3.0', '1.2.9') > 0);
  assert.ok(compareVersions('2.0.0', '1.9.9') > 0);
});

test('rejects invalid versions', () => {
  assert.throws(() => compareVersions('1.x', '1.0'), TypeError);
  assert.throws(() => compareVersions('', '1.0'), TypeError);
});

test('sortVersions and maxVersion', () => {
  assert.deepEqual(sortVersions(['1.4.1', '1.2.0', '1.3.9']), ['1.2.0', '1.3.9', '1.4.1']);
  assert.equal(maxVersion(['1.2.0', '1.4.1', '1.3.9']), '1.4.1');
  assert.equal(maxVersion([]), undefined);
});
