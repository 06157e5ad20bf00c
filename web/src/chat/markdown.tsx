/**
 * Markdown as the agents write it: GitHub tables, task lists and autolinks; code highlighted once the
 * highlighter has loaded (a separate chunk, so the first page stays small); links open in a new tab.
 */
import { memo, useEffect, useState } from 'react';
import ReactMarkdown, { type Components, type Options } from 'react-markdown';
import remarkGfm from 'remark-gfm';
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
const components: Components = {
  a: ({ node: _node, ...props }) => <a {...props} target="_blank" rel="noopener noreferrer" />,
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
