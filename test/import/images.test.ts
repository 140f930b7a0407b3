// --images: the built-in conventions spell each row's image as SWE-bench's harness and Epoch's
// registry name them, a template fills every placeholder, and a wrong value is one line.
import { describe, expect, it } from 'vitest';
import {
  hostArch,
  imageName,
  instanceId1776,
  parseImageTemplate,
} from '../../src/import/images.js';
import { ProctorError } from '../../src/errors.js';

const row = { instanceId: 'django__django-11099', repo: 'django/django', version: '3.0' };

function usage(value: string): string {
  try {
    parseImageTemplate(value);
  } catch (error) {
    expect(error).toBeInstanceOf(ProctorError);
    expect((error as ProctorError).code).toBe('USAGE');
    return (error as Error).message;
  }
  throw new Error(`--images ${value} was accepted`);
}

describe('--images', () => {
  it("names SWE-bench's image as its harness does: lower-cased, with __ spelled _1776_", () => {
    const swebench = parseImageTemplate('swebench');
    expect(imageName(swebench, row, 'x86_64')).toEqual({
      name: 'swebench/sweb.eval.x86_64.django_1776_django-11099:latest',
    });
    expect(imageName(swebench, { ...row, instanceId: 'Sphinx-Doc__sphinx-8721' }, 'arm64')).toEqual(
      { name: 'swebench/sweb.eval.arm64.sphinx-doc_1776_sphinx-8721:latest' },
    );
    expect(instanceId1776('astropy__astropy-12907')).toBe('astropy_1776_astropy-12907');
  });

  it("names Epoch's image with the instance id as the row has it", () => {
    expect(imageName(parseImageTemplate('epoch'), row, 'x86_64')).toEqual({
      name: 'ghcr.io/epoch-research/swe-bench.eval.x86_64.django__django-11099:latest',
    });
  });

  it('fills every placeholder of a template, and adds :latest only where it names no tag', () => {
    const template = parseImageTemplate(
      'localhost:5000/{repo}/{arch}.{instance_id}.{instance_id_1776}:v{version}',
    );
    expect(imageName(template, row, 'x86_64')).toEqual({
      name: 'localhost:5000/django__django/x86_64.django__django-11099.django_1776_django-11099:v3.0',
    });
    expect(imageName(parseImageTemplate('localhost:5000/img.{instance_id_1776}'), row)).toEqual({
      name: 'localhost:5000/img.django_1776_django-11099:latest',
    });
  });

  it("takes this machine's architecture by SWE-bench's names", () => {
    expect(hostArch('x64')).toBe('x86_64');
    expect(hostArch('arm64')).toBe('arm64');
  });

  it('refuses a row without the version its template needs, and a name Docker cannot hold', () => {
    const versioned = parseImageTemplate('r/{instance_id}:{version}');
    expect(imageName(versioned, { instanceId: 'a__b-1', repo: 'a/b' })).toEqual({
      reason: '--images r/{instance_id}:{version}: the row has no version for {version}',
    });
    expect(imageName(versioned, { ...row, instanceId: 'Bad Id' })).toEqual({
      reason: expect.stringContaining('malformed image name or tag') as string,
    });
  });

  it('refuses an unknown name, an unknown placeholder, a lone brace and a digest, in one line', () => {
    expect(usage('swe-bench')).toBe(
      '--images swe-bench: not a known convention (swebench, epoch) nor a template with a placeholder ({instance_id}, {instance_id_1776}, {repo}, {arch}, {version})',
    );
    expect(usage('r/{instance}')).toBe(
      '--images r/{instance}: unknown placeholder {instance}; the placeholders are {instance_id}, {instance_id_1776}, {repo}, {arch}, {version}',
    );
    expect(usage('r/{instance_id')).toContain('a brace without its pair');
    expect(usage(`r/{instance_id}@sha256:${'a'.repeat(64)}`)).toContain(
      'names a tag, not a digest',
    );
    for (const value of ['swe-bench', 'r/{instance}', 'r/{instance_id']) {
      expect(usage(value)).not.toContain('\n');
    }
  });
});
