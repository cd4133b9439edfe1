import type { Root } from "hast";
import { toJsxRuntime } from "hast-util-to-jsx-runtime";
import { Fragment, jsx, jsxs } from "react/jsx-runtime";

/**
 * Draws a note body the server already turned into a sanitised tree
 * (markdown.server.ts beside it) as React elements: no HTML strings, no parser in the browser.
 * Table alignment stays an attribute, not an inline style, which the CSP would refuse.
 */
export function Markdown({ tree, testId }: { tree: Root; testId?: string }) {
  return (
    <div className="markdown" data-testid={testId}>
      {toJsxRuntime(tree, { Fragment, jsx, jsxs, tableCellAlignToStyle: false })}
    </div>
  );
}
