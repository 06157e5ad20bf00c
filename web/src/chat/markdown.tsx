/**
 * Markdown as the agents write it: GitHub tables, task lists and autolinks; code highlighted once the
 * highlighter has loaded (a separate chunk, so the first page stays small); links open in a new tab.
 */
import { type ComponentProps, memo, useEffect, useRef, useState } from 'react';
import ReactMarkdown, { type Components, type Options } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { CopyButton } from '../controls/copy-button.tsx';
import { closeOpenMarkdown } from './close-open-markdown.ts';

type RehypePlugins = NonNullable<Options['rehypePlugins']>;
let highlightPlugins: RehypePlugins | undefined;
let highlightLoading: Promise<RehypePlugins> | undefined;

function loadHighlight(): Promise<RehypePlugins> {
  highlightLoading ??= import('rehype-highlight').then((module) => {
    highlightPlugins = [[module.default, { detect: false, ignoreMissing: true }]];
    return highlightPlugins;
  });
  return highlightLoading;
}

const remarkPlugins = [remarkGfm];

/** A code block with a button that copies its code (as it reads, highlighting left out). */
function CodeBlock({ node: _node, ...props }: ComponentProps<'pre'> & { node?: unknown }) {
  const pre = useRef<HTMLPreElement>(null);
  const language = /language-([\w+-]+)/.exec(
    String((props.children as { props?: { className?: string } } | undefined)?.props?.className ?? ''),
  )?.[1];
  return (
    <div className="code-block">
      <pre ref={pre} {...props} />
      <CopyButton
        className="icon-button code-copy"
        label={language ? `Copy ${language} code` : 'Copy code'}
        text={() => pre.current?.textContent ?? ''}
        showText={false}
      />
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

/**
 * Renders Markdown; `text` may grow while it streams, and then (`streaming`) its open markers are closed
 * for rendering, so no raw `**` shows before the closing one arrives.
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
  return (
    <div className="markdown">
      <ReactMarkdown
        remarkPlugins={remarkPlugins}
        rehypePlugins={hasCode ? plugins : undefined}
        components={components}
      >
        {streaming ? closeOpenMarkdown(text) : text}
      </ReactMarkdown>
    </div>
  );
});
