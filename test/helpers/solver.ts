// A real solver sandbox for tool and MCP tests: the shell fixture task's image (built once),
// a fresh workspace and an idle solver container, removed after the test.
import { loadBundle, type Bundle } from '../../src/oracle/index.js';
import {
  createWorkspace,
  removeContainer,
  resolveImage,
  startIdleContainer,
} from '../../src/sandbox/index.js';
import type { ToolSandbox } from '../../src/solvers/index.js';
import { SHELL_TASK } from './bundles.js';
import { testDocker, type DockerScope } from './docker.js';
import { onCleanup } from './temp.js';

let task: Promise<{ bundle: Bundle; imageId: string }> | undefined;

/** The shell fixture task and its image id, resolved once per test file. */
export function shellTask(): Promise<{ bundle: Bundle; imageId: string }> {
  task ??= (async () => {
    const bundle = await loadBundle(SHELL_TASK);
    const image = await resolveImage(testDocker(), bundle.environment);
    return { bundle, imageId: image.localId };
  })();
  return task;
}

export interface SolverSandboxOptions {
  outputBytes?: number;
  patchBytes?: number;
}

/** A solver container on a fresh workspace in `scope`, removed (with its volume) after the test. */
export async function solverSandbox(
  scope: DockerScope,
  options: SolverSandboxOptions = {},
): Promise<ToolSandbox> {
  const docker = testDocker();
  const { bundle, imageId } = await shellTask();
  const owner = scope.owner();
  const ids = { uid: 1000, gid: 1000, workdir: bundle.workdir };
  const common = { owner, role: 'solver' as const, image: imageId, ...ids };
  const volume = await createWorkspace(docker, {
    ...common,
    repoPath: bundle.workdir,
    baseCommit: bundle.baseCommit,
  });
  const container = await startIdleContainer(docker, {
    ...common,
    workspace: { volume, target: bundle.workdir },
    limits: { memoryMb: 256, pids: 64 },
  });
  onCleanup(() => removeContainer(container));
  return {
    docker,
    containerId: container.id,
    workdir: bundle.workdir,
    user: '1000:1000',
    outputBytes: options.outputBytes ?? 65_536,
    patchBytes: options.patchBytes ?? 1024 * 1024,
  };
}
