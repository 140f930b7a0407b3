// A small structured logger: one line per event on stderr (or any stream), JSON when asked.
// Everything above it takes a Logger from its deps, so tests can capture or silence it.

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

export interface Logger {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export function createLogger(
  options: { level?: LogLevel; json?: boolean; write?: (line: string) => void } = {},
): Logger {
  const min = ORDER[options.level ?? 'info'];
  const write = options.write ?? ((line: string) => process.stderr.write(line + '\n'));
  const emit = (level: LogLevel, message: string, fields?: LogFields) => {
    if (ORDER[level] < min) return;
    if (options.json) {
      write(JSON.stringify({ time: new Date().toISOString(), level, message, ...fields }));
      return;
    }
    const extra = fields
      ? Object.entries(fields)
          .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
          .join(' ')
      : '';
    write(`proctor ${level}: ${message}${extra ? ` (${extra})` : ''}`);
  };
  return {
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
  };
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
