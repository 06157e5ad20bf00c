/**
 * Code highlighting, loaded only once an answer has a code block (its own chunk). Each language's grammar
 * is registered the first time a block in it appears: registering all of highlight.js's common languages
 * up front (as rehype-highlight does each time it is attached) blocked the page for a long task while an
 * answer streamed.
 */
import type { Element, ElementContent, Root, RootContent } from 'hast';
import { common, createLowlight } from 'lowlight';

const lowlight = createLowlight();
const grammars = common as Record<string, Parameters<typeof lowlight.register>[1]>;

/** The usual short names of the common languages, as people write them after a fence. */
const ALIASES: Record<string, string> = {
  ts: 'typescript',
  tsx: 'typescript',
  mts: 'typescript',
  js: 'javascript',
  jsx: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  py: 'python',
  sh: 'bash',
  shell: 'bash',
  zsh: 'bash',
  console: 'shell',
  yml: 'yaml',
  md: 'markdown',
  rs: 'rust',
  golang: 'go',
  'c++': 'cpp',
  cc: 'cpp',
  h: 'c',
  cs: 'csharp',
  rb: 'ruby',
  kt: 'kotlin',
  html: 'xml',
  svg: 'xml',
  jsonc: 'json',
  diff: 'diff',
  patch: 'diff',
};

/** The registered grammar's name for a fence's language, registering it on first use; undefined if none. */
function grammarFor(language: string): string | undefined {
  const lowered = language.toLowerCase();
  const name = lowered === 'console' ? 'shell' : (ALIASES[lowered] ?? lowered);
  if (lowlight.registered(name)) return name;
  const grammar = grammars[name];
  if (!grammar) return undefined;
  lowlight.register(name, grammar);
  return name;
}

function languageOf(code: Element): string | undefined {
  const classes = code.properties.className;
  if (!Array.isArray(classes)) return undefined;
  for (const value of classes) {
    const match = /^lang(?:uage)?-(.+)$/.exec(String(value));
    if (match) return match[1];
  }
  return undefined;
}

function textOf(node: ElementContent): string {
  if (node.type === 'text') return node.value;
  if (node.type === 'element') return node.children.map(textOf).join('');
  return '';
}

function visit(node: Root | RootContent, parent: Root | Element | undefined): void {
  if (node.type === 'element') {
    if (node.tagName === 'code' && parent?.type === 'element' && parent.tagName === 'pre') {
      const language = languageOf(node);
      const name = language ? grammarFor(language) : undefined;
      if (name) {
        const result = lowlight.highlight(name, node.children.map(textOf).join(''));
        const classes = Array.isArray(node.properties.className) ? node.properties.className : [];
        node.properties.className = ['hljs', ...classes];
        if (result.children.length > 0) node.children = result.children as ElementContent[];
      }
      return;
    }
    for (const child of node.children) visit(child, node);
  } else if (node.type === 'root') for (const child of node.children) visit(child, node);
}

/** A rehype plugin highlighting `pre > code.language-*` blocks whose language highlight.js knows. */
export function rehypeCodeHighlight() {
  return (tree: Root) => visit(tree, undefined);
}
