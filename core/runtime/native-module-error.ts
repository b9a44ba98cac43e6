/**
 * A native module that Node cannot load (`ERR_DLOPEN_FAILED`), told as what it nearly always is: an
 * install made with another Node (better-sqlite3 built for Node 20, run on 24), which `npm rebuild`
 * mends. Whoever catches an error that may come from loading one (a lock, the database, the CLI's
 * last catch) asks `nativeModuleError` first, so no other explanation is given for it.
 */
import { CoordinatorError } from '../errors.ts';

const MAX_CAUSES = 8;

/** The ERR_DLOPEN_FAILED error in `error` or its causes, if any. */
function dlopenFailure(error: unknown): Error | undefined {
  let current = error;
  for (let depth = 0; depth < MAX_CAUSES && current instanceof Error; depth++) {
    if ((current as NodeJS.ErrnoException).code === 'ERR_DLOPEN_FAILED') return current;
    current = current.cause;
  }
  return undefined;
}

/** The package a `.node` file belongs to, from the path in Node's message (never the path itself). */
function packageOf(message: string): string {
  const inPackage = /node_modules[\\/]((?:@[^\\/\s]+[\\/])?[^\\/\s']+)/.exec(message);
  if (inPackage) return inPackage[1]!.replace('\\', '/');
  const file = /([^\\/\s']+\.node)\b/.exec(message);
  return file ? file[1]! : 'a native module';
}

/** Node's first line, without the file's path (a refusal may reach the console) and bounded. */
function withoutPaths(line: string): string {
  return line.replace(/(?:\/|[A-Za-z]:\\)[^\s':]+/g, '…').slice(0, 160);
}

/**
 * `runtime.native_module_mismatch` saying which module, which Node it was built for and what to
 * run, when `error` is (or was caused by) a failed load of a native module; undefined otherwise.
 */
export function nativeModuleError(error: unknown): CoordinatorError | undefined {
  const failure = dlopenFailure(error);
  if (!failure) return undefined;
  const module = packageOf(failure.message);
  const built = /NODE_MODULE_VERSION (\d+)\. This version of Node\.js requires\s+NODE_MODULE_VERSION (\d+)/.exec(
    failure.message,
  );
  const why = built
    ? `was built for another version of Node (module version ${built[1]}; Node ${process.versions.node} needs ` +
      `${built[2]})`
    : `could not be loaded by Node ${process.versions.node} (${withoutPaths(failure.message.split('\n')[0]!)})`;
  return new CoordinatorError(
    'runtime.native_module_mismatch',
    `${module} ${why}: run \`npm rebuild\` in the project folder with this Node, then run the command again`,
  );
}
