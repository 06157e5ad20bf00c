/**
 * Markdown as the agents write it: GitHub tables, task lists and autolinks; code highlighted once the
 * highlighter has loaded (a separate chunk, so the first page stays small); links open in a new tab.
 */
import { memo, useEffect, useState } from 'react';
import ReactMarkdown, { type Components, type Options } from 'react-markdown';
import remarkGfm from 'remark-gfm';

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
const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
  table: ({ node: _node, ...props }) => (
    <div className="table-scroll">
      <table {...props} />
    </div>
  ),
};

/** Renders Markdown; `text` may grow while it streams. */
export const Markdown = memo(function Markdown({ text }: { text: string }) {
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
        {text}
      </ReactMarkdown>
    </div>
  );
});
