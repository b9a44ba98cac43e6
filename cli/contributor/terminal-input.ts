/**
 * What the terminal client reads from the person at the keyboard: a line typed without echo (the
 * optional extra entropy; read from stdin when it is not a terminal, so scripts can pipe it), and
 * a yes/no question (leave during a turn?). Both read raw keys from a terminal, so Ctrl-C while
 * asked arrives as a key rather than a signal and is taken as the firm answer: "stop" / "yes".
 */
import { createInterface } from 'node:readline';

/** Typed text beyond this is ignored: entropy needs no more, and memory stays bounded. */
const MAX_TYPED_CHARACTERS = 64 * 1024;
const CTRL_C = '\u0003';
const CTRL_D = '\u0004';

export class InputInterrupted extends Error {
  override readonly name = 'InputInterrupted';
}

/** Whether both the keyboard and the screen are a terminal (questions can be asked). */
export function interactive(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/**
 * One line typed without echo (stars are not shown either: nothing about the text's length is
 * displayed). On a pipe, the first line of stdin. Rejects with InputInterrupted on Ctrl-C.
 */
export function readHiddenLine(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    return new Promise((resolve) => {
      const lines = createInterface({ input: stdin, terminal: false });
      let answered = false;
      const finish = (line: string): void => {
        if (answered) return;
        answered = true;
        lines.close();
        stdin.pause();
        resolve(line.slice(0, MAX_TYPED_CHARACTERS));
      };
      lines.once('line', finish);
      lines.once('close', () => finish(''));
    });
  }
  process.stderr.write(prompt);
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (error?: Error): void => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed);
    };
    const onData = (chunk: Buffer): void => {
      for (const character of chunk.toString('utf8')) {
        if (character === CTRL_C) return done(new InputInterrupted('interrupted'));
        if (character === '\r' || character === '\n' || character === CTRL_D) return done();
        if (character === '\u007f' || character === '\b') typed = typed.slice(0, -1);
        else if (typed.length < MAX_TYPED_CHARACTERS && character >= ' ') typed += character;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}

/** Asks on the terminal; resolves true for y/Y (or Ctrl-C: the person insists), false for anything else. */
export function askYesNo(question: string): Promise<boolean> {
  const stdin = process.stdin;
  process.stderr.write(`\r\u001b[2K${question} [y/N] `);
  return new Promise((resolve) => {
    const onData = (chunk: Buffer): void => {
      const key = chunk.toString('utf8')[0] ?? '';
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      const yes = key === 'y' || key === 'Y' || key === CTRL_C;
      process.stderr.write(`${yes ? 'yes' : 'no'}\n`);
      resolve(yes);
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on('data', onData);
  });
}
