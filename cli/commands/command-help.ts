/**
 * How every `ceremony … --help` reads, in one place: wrapped to the terminal's width (on a terminal
 * its columns, else `COLUMNS`, else 80), one style for defaults (`(default: X)`, also for a default
 * taken from the environment), required options marked `(required)`, and the text after the
 * options (notes, then examples) wrapped the same way. main.ts applies `styleHelp` to the program
 * and to the command that runs; a command's module only says what to show, with `helpNotes`,
 * `helpItems` and `helpExamples`, so a new option or command needs no edit here.
 */
import { Help, type Command, type Option, type Argument } from 'commander';

const MIN_WIDTH = 40;
const MAX_WIDTH = 200;
const FALLBACK_WIDTH = 80;

/** The width help is wrapped to: the terminal's columns, else COLUMNS (a pipe, a test), else 80. */
function helpWidth(stream: NodeJS.WriteStream = process.stdout): number {
  const columns = stream.isTTY ? stream.columns : Number(process.env.COLUMNS);
  if (!Number.isInteger(columns) || columns <= 0) return FALLBACK_WIDTH;
  return Math.min(MAX_WIDTH, Math.max(MIN_WIDTH, columns));
}

/** `(required)` and `(default: X)`, the one way every option says them. */
function optionDescription(option: Option): string {
  const extra: string[] = [];
  if (option.mandatory) extra.push('required');
  const takesValue = option.required || option.optional;
  const shown =
    option.defaultValueDescription ??
    (takesValue && option.defaultValue !== undefined ? String(option.defaultValue) : undefined);
  if (shown !== undefined) extra.push(`default: ${shown}`);
  return extra.length > 0 ? `${option.description} (${extra.join('; ')})` : option.description;
}

function argumentDescription(argument: Argument): string {
  const shown =
    argument.defaultValueDescription ??
    (argument.defaultValue !== undefined ? String(argument.defaultValue) : undefined);
  return shown === undefined ? argument.description : `${argument.description} (default: ${shown})`;
}

/** The usage line wrapped too, its continuation under the first argument. */
function formatHelp(command: Command, helper: Help): string {
  const text = Help.prototype.formatHelp.call(helper, command, helper);
  const [usage = '', ...rest] = text.split('\n');
  const width = helper.helpWidth ?? FALLBACK_WIDTH;
  if (usage.length <= width) return text;
  const indent = Math.min(usage.indexOf(' [') > 0 ? usage.indexOf(' [') + 1 : 8, width - MIN_WIDTH / 2);
  const wrapped = helper.boxWrap(usage, width).split('\n');
  const [first = '', ...more] = wrapped;
  const continued = helper
    .boxWrap(more.join(' '), width - indent)
    .split('\n')
    .map((line) => `${' '.repeat(indent)}${line}`);
  return [first, ...continued, ...rest].join('\n');
}

/** A command in its parent's list: its name and arguments (`[options]` is every command's, said once in its help). */
function subcommandTerm(sub: Command): string {
  const args = sub.registeredArguments.map((arg) => {
    const name = `${arg.name()}${arg.variadic ? '...' : ''}`;
    return arg.required ? `<${name}>` : `[${name}]`;
  });
  return [sub.name(), ...args].join(' ');
}

/** Applies the house style of help to a command (and the program): width, defaults, required marks, usage. */
export function styleHelp(command: Command): Command {
  return command
    .helpOption('-h, --help', 'show this help')
    .configureOutput({
      getOutHelpWidth: () => helpWidth(process.stdout),
      getErrHelpWidth: () => helpWidth(process.stderr),
    })
    .configureHelp({ optionDescription, argumentDescription, formatHelp, subcommandTerm, minWidthToWrap: 20 });
}

/** `text` wrapped to `width`; an indented line keeps its indent, and its continuation goes `indent` further in. */
function wrapHanging(text: string, width: number, indent: number): string {
  const helper = new Help();
  const lead = /^ */.exec(text)![0].length;
  if (lead === 0) indent = 0;
  const body = helper.boxWrap(text.trimStart(), width - lead - indent).split('\n');
  return body.map((line, i) => `${' '.repeat(lead + (i === 0 ? 0 : indent))}${line}`).join('\n');
}

type HelpContext = { error: boolean };
type HelpTextFn = (context: HelpContext) => string;

const widthFor = (context: HelpContext) => helpWidth(context.error ? process.stderr : process.stdout);

/**
 * Text shown after the options, wrapped to the width. Blank lines part paragraphs; within one, a line
 * that starts with spaces starts a new line (a list item, a command), keeping them, and its wrapped
 * continuation is indented two more; any other line break is only where the source was cut.
 */
export function helpNotes(...texts: string[]): HelpTextFn {
  return (context) => {
    const width = widthFor(context);
    const lines = texts.flatMap((text) =>
      text
        .replace(/^\n+|\n+$/g, '')
        .split(/\n\s*\n/)
        .flatMap((block, index) => [
          ...(index > 0 ? [''] : []),
          ...block.split(/\n(?=\s)/).map((line) => wrapHanging(line.replace(/\n(?!\s)/g, ' '), width, 2)),
        ]),
    );
    return `\n${lines.join('\n')}`;
  };
}

/** A titled list of terms and their descriptions, laid out as the options are. */
export function helpItems(title: string, items: readonly (readonly [string, string])[]): HelpTextFn {
  return (context) => {
    const helper = new Help();
    helper.helpWidth = widthFor(context);
    const termWidth = Math.max(...items.map(([term]) => term.length));
    return `\n${title}\n${items.map(([term, text]) => helper.formatItem(term, termWidth, text, helper)).join('\n')}`;
  };
}

/** The last section of a command's help: what each example does (a comment), then the command line. */
export function helpExamples(...examples: readonly (readonly [what: string, commandLine: string])[]): HelpTextFn {
  return (context) => {
    const width = widthFor(context);
    const lines = examples.flatMap(([what, commandLine]) => [
      new Help()
        .boxWrap(what, width - 4)
        .split('\n')
        .map((line) => `  # ${line}`)
        .join('\n'),
      ...commandLine.split('\n').map((line, i) => `${i === 0 ? '  ' : '    '}${line.trimStart()}`),
    ]);
    return `\nExamples:\n${lines.join('\n')}`;
  };
}
