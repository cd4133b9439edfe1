import type { Element, Root as HastRoot, Nodes } from "hast";
import type { Image, Nodes as MdastNodes, Root as MdastRoot } from "mdast";
import rehypeSanitize from "rehype-sanitize";
import remarkBreaks from "remark-breaks";
import remarkGfm from "remark-gfm";
import remarkParse from "remark-parse";
import remarkRehype from "remark-rehype";
import { unified } from "unified";
import { BODY_MAX } from "./rules";

/** A note body as a sanitised HTML tree (hast), ready for components/markdown.tsx to draw. */
export type MarkdownTree = HastRoot;

/**
 * Markdown (CommonMark + GitHub's tables, task lists, strikethrough and autolinks) turned into a
 * tree on the server, so the parser never ships to the browser. A line break in the text is a
 * line break on the page (as in GitHub comments): notes are often lists typed one per line.
 * Safe by construction, twice:
 *  - raw HTML in the text is dropped (remark-rehype without `allowDangerousHtml`), so `<script>`,
 *    `<img onerror>` and `<style>` never become elements;
 *  - the tree then goes through rehype-sanitize's default (GitHub) schema: only known tags and
 *    attributes, no `on*` handlers or `style`, and links only to http(s), mailto and the like
 *    (`javascript:` and `data:` URLs lose their href).
 * Images become links: the CSP allows no images from other sites (no tracking pixels either).
 * Headings move one level down, as the note's title is the page's h1.
 */
const processor = unified()
  .use(remarkParse)
  .use(remarkGfm)
  .use(remarkBreaks)
  .use(() => (tree: MdastRoot) => demoteHeadings(tree))
  .use(remarkRehype, { handlers: { image: imageAsLink } })
  .use(rehypeSanitize);

export function renderMarkdown(source: string): MarkdownTree {
  const tree = processor.runSync(processor.parse(source.slice(0, BODY_MAX)));
  return withoutPositions(tree) as MarkdownTree;
}

function demoteHeadings(node: MdastNodes) {
  if (node.type === "heading") node.depth = Math.min(node.depth + 1, 6) as typeof node.depth;
  if ("children" in node) for (const child of node.children) demoteHeadings(child);
}

function imageAsLink(_state: unknown, node: Image): Element {
  const label = node.alt ? `Image: ${node.alt}` : "Image";
  return {
    type: "element",
    tagName: "a",
    properties: { href: node.url },
    children: [{ type: "text", value: label }],
  };
}

/** The tree without source positions: they are only weight in the page's data. */
function withoutPositions(node: Nodes): Nodes {
  const { position: _, ...rest } = node;
  if ("children" in rest) {
    return { ...rest, children: rest.children.map((child) => withoutPositions(child)) } as Nodes;
  }
  return rest as Nodes;
}
