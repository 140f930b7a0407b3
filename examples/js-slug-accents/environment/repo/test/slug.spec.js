'use strict';
const assert = require('assert');
const { slugify } = require('../src/slug');

describe('slugify', function () {
  it('lowercases and joins words with dashes', function () {
    assert.strictEqual(slugify('Hello, World!'), 'hello-world');
  });
  it('collapses runs of spaces and punctuation', function () {
    assert.strictEqual(slugify('  Ten  tips -- for   2024 '), 'ten-tips-for-2024');
  });
  it('returns an empty slug for a title without letters', function () {
    assert.strictEqual(slugify('?!'), '');
  });
  describe('maxLength', function () {
    it('never cuts a word in half', function () {
      assert.strictEqual(slugify('one two three', { maxLength: 9 }), 'one-two');
    });
  });
});
