/**
 * Markdown as the agents write it: GitHub tables, task lists and autolinks; code highlighted once the
 * highlighter has loaded (a separate chunk, so the first page stays small); links open in a new tab.
 */
import { type ComponentProps, memo, useEffect, useRef, useState } from 'react';
import ReactMarkdown, { type Components, type Options } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { CopyButton } from '../controls/copy-button.tsx';
import { closeOpenMarkdown } from './close-open-markdown.ts';
import { growBlocks } from './markdown-blocks.ts';

type RehypePlugins = NonNullable<Options['rehypePlugins']>;
let highlightPlugins: RehypePlugins | undefined;
let highlightLoading: Promise<RehypePlugins> | undefined;

function loadHighlight(): Promise<RehypePlugins> {
  highlightLoading ??= import('./highlight.ts').then((module) => {
    highlightPlugins = [module.rehypeCodeHighlight];
    return highlightPlugins;
  });
  return highlightLoading;
}

type RemarkPlugins = NonNullable<Options['remarkPlugins']>;
const remarkPlugins: RemarkPlugins = [remarkGfm];

interface MathPlugins {
  remark: RemarkPlugins;
  rehype: RehypePlugins;
}
let mathPlugins: MathPlugins | undefined;
let mathLoading: Promise<MathPlugins> | undefined;

function loadMath(): Promise<MathPlugins> {
  mathLoading ??= import('./math.ts').then((module) => {
    mathPlugins = {
      remark: [remarkGfm, module.remarkMathPlugin],
      rehype: [module.rehypeMathPlugin as unknown as RehypePlugins[number]],
    };
    return mathPlugins;
  });
  return mathLoading;
}

/** Whether text looks like it has LaTeX: `$$`, `\(`, `\[`, or `$…$` around something that is not a price. */
export function hasMath(text: string): boolean {
  return /\$\$|\\\(|\\\[|(?:^|[^\\$\w])\$(?![\s\d])[^$\n]+?(?<![\s\\])\$(?!\d)/.test(text);
}

/** `\(…\)` and `\[…\]` as remark-math reads them (`$…$`, `$$…$$`), outside code. */
export function normalizeMath(text: string): string {
  if (!text.includes('\\(') && !text.includes('\\[')) return text;
  return text
    .split(/(```[\s\S]*?(?:```|$)|`[^`\n]*`)/)
    .map((piece, index) =>
      index % 2 === 1
        ? piece
        : piece
            .replace(/\\\[([\s\S]+?)\\\]/g, (_all, body: string) => `$$${body}$$`)
            .replace(/\\\((.+?)\\\)/g, (_all, body: string) => `$${body}$`),
    )
    .join('');
}

/** A code block with a button that copies its code (as it reads, highlighting left out). */
function CodeBlock({ node: _node, ...props }: ComponentProps<'pre'> & { node?: unknown }) {
  const pre = useRef<HTMLPreElement>(null);
  const language = /language-([\w+-]+)/.exec(
    String((props.children as { props?: { className?: string } } | undefined)?.props?.className ?? ''),
  )?.[1];
  // The copy button sits in a bar above the code, never over it (a long line scrolls under nothing).
  return (
    <div className="code-block">
      <div className="code-header">
        <span className="code-language">{language ?? 'code'}</span>
        <CopyButton
          className="icon-button code-copy"
          label={language ? `Copy ${language} code` : 'Copy code'}
          text={() => pre.current?.textContent ?? ''}
          showText={false}
        />
      </div>
      <pre ref={pre} {...props} />
    </div>
  );
}

const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
  pre: CodeBlock,
  table: ({ node: _node, ...props }) => (
    <div className="table-scroll">
      <table {...props} />
    </div>
  ),
};

/** One top-level block, rendered once for each text it is given (a settled block is never drawn again). */
const MarkdownBlock = memo(function MarkdownBlock({
  text,
  plugins,
  math,
}: {
  text: string;
  plugins: RehypePlugins | undefined;
  math: MathPlugins | undefined;
}) {
  return (
    <ReactMarkdown
      remarkPlugins={math ? math.remark : remarkPlugins}
      rehypePlugins={math ? [...math.rehype, ...(plugins ?? [])] : plugins}
      components={components}
    >
      {math ? normalizeMath(text) : text}
    </ReactMarkdown>
  );
});

/**
 * Renders Markdown; `text` may grow while it streams, and then (`streaming`) its open markers are closed
 * for rendering, so no raw `**` shows before the closing one arrives. The text is drawn block by block
 * (markdown-blocks.ts): as it grows only its last block is parsed and drawn again, so a 20 KB answer costs
 * each update what its newest paragraph costs, not its whole length.
 */
export const Markdown = memo(function Markdown({
  text,
  streaming = false,
}: {
  text: string;
  streaming?: boolean;
}) {
  const [plugins, setPlugins] = useState(highlightPlugins);
  const hasCode = text.includes('```');
  useEffect(() => {
    if (hasCode && !plugins) void loadHighlight().then(setPlugins);
  }, [hasCode, plugins]);
  const [math, setMath] = useState(mathPlugins);
  const withMath = hasMath(text);
  useEffect(() => {
    if (withMath && !math) void loadMath().then(setMath);
  }, [withMath, math]);
  const cut = useRef<{ text: string; blocks: string[] }>({ text: '', blocks: [''] });
  if (cut.current.text !== text)
    cut.current = { text, blocks: growBlocks(cut.current.text, cut.current.blocks, text) };
  const { blocks } = cut.current;
  const last = blocks.length - 1;
  return (
    <div className="markdown">
      {blocks.map((block, index) => (
        <MarkdownBlock
          // biome-ignore lint/suspicious/noArrayIndexKey: blocks only grow at the end; a block keeps its place
          key={index}
          text={streaming && index === last ? closeOpenMarkdown(block) : block}
          plugins={block.includes('```') ? plugins : undefined}
          math={withMath && hasMath(block) ? math : undefined}
        />
      ))}
    </div>
  );
});
