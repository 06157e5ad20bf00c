/**
 * Text from files, pages and models reaches the terminal through these helpers, so an escape sequence
 * hidden in a document title or a model's answer (OSC to retitle the window or write the clipboard, CSI to
 * move the cursor or clear the screen) is shown as nothing rather than obeyed.
 */

// CSI (7-bit and the C1 form) and OSC sequences, then any other C0/C1 control character but tab and newline.
const CONTROL_SEQUENCES =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?|\x1b[@-_]?|[\x00-\x08\x0b-\x1f\x7f-\x9f]/g;

/** `text` without terminal control sequences; newlines and tabs kept. */
export function withoutControls(text: string): string {
  return text.replace(CONTROL_SEQUENCES, '');
}

/** One printable line: control sequences removed, whitespace (newlines too) collapsed to single spaces. */
export function printableLine(text: string): string {
  return withoutControls(text).replace(/\s+/g, ' ').trim();
}
