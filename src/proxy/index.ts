// The metering model proxy: the agent adapter's route to a model. On the host, one proxy per
// solve holds the provider key and network, meters and limits every request, and records the
// trajectory; in the sandbox, a loopback forwarder pipes the agent's connections to it.
export { startModelProxy } from './server.js';
export type { ModelProxy } from './server.js';
export { startHostRoute } from './host-route.js';
export type { HostRoute } from './host-route.js';
export { SOCKET_NAME, DEFAULT_MAX_REQUEST_BYTES, DEFAULT_UPSTREAM_IDLE_MS } from './options.js';
export type { ModelProxyOptions } from './options.js';
export type { ProxyLimits, SharedCost } from './budget.js';
export type { Upstream } from './exchange.js';
export { WIRE_PROTOCOLS } from './protocols.js';
export type { WireProtocol } from './protocols.js';
export { FORWARDER_NODE_SOURCE, FORWARDER_PYTHON_SOURCE, forwarderArgv } from './forwarder.js';
export type { ForwarderRuntime } from './forwarder.js';
export {
  STEP_OUTCOMES,
  STOP_REASONS,
  proxyStopSchema,
  trajectorySchema,
  trajectoryStepSchema,
  trajectoryMessageSchema,
} from './trajectory.js';
export type {
  ProxyStop,
  StopReason,
  Trajectory,
  TrajectoryMessage,
  TrajectoryStep,
} from './trajectory.js';
