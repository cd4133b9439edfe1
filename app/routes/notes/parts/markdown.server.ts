import type { Element, Root as HastRoot, Nodes } from "hast";
import type { Heading, Image, Nodes as MdastNodes, Root as MdastRoot } from "mdast";
import { gfmFromMarkdown } from "mdast-util-gfm";
import { toString as mdastToString } from "mdast-util-to-string";
import { gfm } from "micromark-extension-gfm";
import rehypeSanitize from "rehype-sanitize";
import remarkBreaks from "remark-breaks";
import remarkParse from "remark-parse";
import remarkRehype from "remark-rehype";
import { type Processor, unified } from "unified";
import { remembered } from "./remembered";
import { BODY_MAX, NESTING_MAX } from "./rules";

/** A note body as a sanitised HTML tree (hast), ready for markdown.tsx (beside it) to draw. */
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
 * Headings start at h2 (the note's title is the page's h1) and never skip a level, so the page's
 * outline holds whatever levels the text used.
 */
const processor = unified()
  .use(remarkParse)
  .use(gfmParsing)
  .use(remarkBreaks)
  .use(() => (tree: MdastRoot) => outlineHeadings(tree))
  .use(remarkRehype, { handlers: { image: imageAsLink } })
  .use(rehypeSanitize);

/**
 * GitHub's extensions to the parser only: what remark-gfm does, without also registering their
 * Markdown writers (mdast-util-to-markdown), which nothing here uses and the Worker would upload.
 */
function gfmParsing(this: Processor) {
  const data = this.data();
  data.micromarkExtensions = [...(data.micromarkExtensions ?? []), gfm()];
  data.fromMarkdownExtensions = [...(data.fromMarkdownExtensions ?? []), gfmFromMarkdown()];
}

export function renderMarkdown(source: string): MarkdownTree {
  const text = source.slice(0, BODY_MAX);
  // a body nested deeper than the form allows (saved before the limit, or written through the
  // data API) is shown as its plain text rather than parsed
  if (markdownNesting(text) > NESTING_MAX) return plainText(text);
  const tree = processor.runSync(processor.parse(text));
  return withoutPositions(tree) as MarkdownTree;
}

/** A container's marker at the start of `line` from `at`: its length, or 0 (none there). */
const CONTAINER_MARKER = /^[ \t]{0,3}(?:>|[-+*](?=[ \t]|$)|\d{1,9}[.)](?=[ \t]|$))[ \t]{0,4}/;

/**
 * How deep the quotes and lists of some Markdown nest, counted as the most container markers
 * (`>`, `-`, `*`, `+`, `1.`, `1)`) that open one line: each keeps a container open for what
 * follows on that line. Nesting by indentation alone adds a level per two or more spaces on every
 * line of it, so the text's length bounds that on its own. (A thematic break written `- - -`
 * counts as three: never near the limit.)
 */
export function markdownNesting(source: string): number {
  let deepest = 0;
  for (const line of source.split("\n")) {
    let depth = 0;
    let rest = line;
    for (let marker = CONTAINER_MARKER.exec(rest); marker; marker = CONTAINER_MARKER.exec(rest)) {
      depth++;
      rest = rest.slice(marker[0].length);
      if (!rest) break;
    }
    deepest = Math.max(deepest, depth);
  }
  return deepest;
}

/** Text as paragraphs (at blank lines) with their line breaks, and no Markdown read in it. */
function plainText(source: string): MarkdownTree {
  const paragraphs = source.split(/\n\s*\n/).filter((block) => block.trim());
  return {
    type: "root",
    children: paragraphs.map((block) => ({
      type: "element",
      tagName: "p",
      properties: {},
      children: block
        .split("\n")
        .flatMap((line, i) => [
          ...(i > 0
            ? [{ type: "element" as const, tagName: "br", properties: {}, children: [] }]
            : []),
          { type: "text" as const, value: line },
        ]),
    })),
  };
}

/**
 * The words of some Markdown without its marks, blocks joined by spaces: what the list's and the
 * home page's one-line excerpts show (`**bread**` reads "bread"; raw HTML is left out).
 */
export function markdownToText(source: string): string {
  const parts: string[] = [];
  const collect = (node: MdastNodes) => {
    if (node.type === "html") return;
    if (["paragraph", "heading", "code", "tableCell"].includes(node.type)) {
      parts.push(mdastToString(node, { includeHtml: false }));
    } else if ("children" in node) {
      for (const child of node.children) collect(child);
    }
  };
  if (markdownNesting(source) > NESTING_MAX) return source.replace(/\s+/g, " ").trim();
  collect(processor.parse(source));
  return parts.join(" ").replace(/\s+/g, " ").trim();
}

/**
 * markdownToText of a note's excerpt, remembered per viewer (see remembered): the list and the
 * home page show the same excerpts on every visit, and parsing them was about a quarter of the
 * Worker's CPU for a page of 20 notes (0.4 ms each). Keyed by the viewer too, so no answer time
 * can tell one user what another has read; 1,000 excerpts are at most a megabyte.
 */
const excerptWords = remembered(1_000, markdownToText);

export function plainExcerpt(viewer: string, excerpt: string): string {
  return excerptWords(`${viewer}\0${excerpt}`, excerpt);
}

function outlineHeadings(tree: MdastRoot) {
  const headings: Heading[] = [];
  const collect = (node: MdastNodes) => {
    if (node.type === "heading") headings.push(node);
    if ("children" in node) for (const child of node.children) collect(child);
  };
  collect(tree);
  // The body's top level becomes h2, and no heading skips a level below the one before it.
  const shift = 2 - Math.min(...headings.map((h) => h.depth));
  let previous = 1;
  for (const heading of headings) {
    const depth = Math.min(heading.depth + shift, previous + 1, 6);
    heading.depth = depth as Heading["depth"];
    previous = depth;
  }
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
