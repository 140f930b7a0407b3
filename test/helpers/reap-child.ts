// A process that reaps a home's templates, every one old enough to be read (halfMadeAgeMs 0),
// prints what it removed as JSON, and returns without process.exit(): it ends only when it
// holds nothing open (test/sandbox/workspace-memory.test.ts).
//
// usage: reap-child.ts HOME
import { createDockerClient } from '../../src/sandbox/docker.js';
import { reapTemplates } from '../../src/sandbox/template.js';

const [home] = process.argv.slice(2);
if (!home) throw new Error('usage: reap-child.ts HOME');
const docker = createDockerClient(process.env['DOCKER_HOST']);
const removed = await reapTemplates(docker, home, { halfMadeAgeMs: 0 });
process.stdout.write(`${JSON.stringify({ removed })}\n`);
