// marked-terminal ships no types, and @types/marked-terminal pins a marked older than the one used here.
declare module 'marked-terminal' {
  import type { MarkedExtension } from 'marked';

  export interface TerminalRendererOptions {
    width?: number;
    reflowText?: boolean;
    tab?: number | string;
    emoji?: boolean;
    showSectionPrefix?: boolean;
  }

  export function markedTerminal(options?: TerminalRendererOptions): MarkedExtension;
}
