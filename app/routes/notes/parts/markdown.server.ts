import type { Element, ElementContent, Root as HastRoot, Properties } from "hast";
import { defaultSchema, sanitize } from "hast-util-sanitize";
import MarkdownIt, { type Token } from "markdown-it";
import { remembered } from "./remembered";
import { BODY_MAX, NESTING_MAX, TABLE_CELLS_MAX } from "./rules";

/** A note body as a sanitised HTML tree (hast), ready for markdown.tsx (beside it) to draw. */
export type MarkdownTree = HastRoot;

/**
 * Markdown (CommonMark + GitHub's tables, task lists, strikethrough and autolinks) turned into a
 * tree on the server, so the parser never ships to the browser. A line break in the text is a
 * line break on the page (as in GitHub comments): notes are often lists typed one per line.
 * markdown-it parses in time about linear in the text whatever its shape (decision 010): a body
 * can cost its readers no more than its length.
 * Safe by construction, twice:
 *  - raw HTML in the text is dropped (its tokens become nothing), so `<script>`, `<img onerror>`
 *    and `<style>` never become elements;
 *  - the tree then goes through hast-util-sanitize's default (GitHub) schema: only known tags and
 *    attributes, no `on*` handlers or `style`, and links only to http(s), mailto and the like
 *    (`javascript:` and `data:` URLs lose their href). Which links keep their target is the
 *    sanitiser's call alone, so the parser takes every URL (`validateLink`) and a refused one still
 *    reads as a link's text, not as its Markdown source.
 * Images become links: the CSP allows no images from other sites (no tracking pixels either).
 * Headings start at h2 (the note's title is the page's h1) and never skip a level, so the page's
 * outline holds whatever levels the text used.
 */
const parser = MarkdownIt({ html: true, linkify: true, breaks: true });
parser.validateLink = () => true;
// bare `www.` links as well as those with a scheme (GitHub's "extended www autolink")
parser.linkify.set({ fuzzyLink: true });

/**
 * How many elements deep the tree may go; deeper marks (emphasis inside emphasis thousands of
 * times) keep their text without their element. Quotes and lists stop at NESTING_MAX levels
 * (two elements each) before this.
 */
const DEPTH_MAX = 100;

/**
 * How many characters of link targets and titles a body's tree may carry. A reference link's
 * target is copied into every use of it: one target of 10,000 characters used 3,000 times made a
 * 17 MB page of a 20,000-character note. Past this, links keep their text without their target.
 */
const LINK_CHARS_MAX = 65_536;

/** Whether some Markdown is past what the note form allows (schemas.server.ts): never parsed. */
function pastLimits(text: string): boolean {
  return markdownNesting(text) > NESTING_MAX || markdownTableCells(text) > TABLE_CELLS_MAX;
}

export function renderMarkdown(source: string): MarkdownTree {
  const text = source.slice(0, BODY_MAX);
  // a body nested deeper, or with larger tables, than the form allows (saved before the limit,
  // or written through the data API) is shown as its plain text rather than parsed
  if (pastLimits(text)) return plainText(text);
  const tokens = parser.parse(text, {});
  outlineHeadings(tokens);
  return sanitize(toTree(tokens), defaultSchema) as MarkdownTree;
}

/** markdown-it's tokens as a hast tree: an element per opening token, a node per leaf. */
function toTree(tokens: Token[]): HastRoot {
  const root: HastRoot = { type: "root", children: [] };
  // the element each open token made, or its parent again when it made none (a tight list's
  // paragraphs, a refused autolink, anything past DEPTH_MAX)
  const open: (HastRoot | Element)[] = [root];
  let depth = 0;
  let linkChars = 0;
  /** A link's or image's target and title while the body's budget lasts (LINK_CHARS_MAX). */
  const target = (properties: Properties): Properties => {
    linkChars += Object.values(properties).reduce<number>((sum, v) => sum + String(v).length, 0);
    return linkChars <= LINK_CHARS_MAX ? properties : {};
  };
  const add = (node: ElementContent) => {
    const siblings = (open.at(-1) as HastRoot | Element).children;
    const last = siblings.at(-1);
    if (node.type === "text" && last?.type === "text") last.value += node.value;
    else siblings.push(node);
  };
  const walk = (list: Token[]) => {
    list.forEach((token, i) => {
      if (token.nesting === 1) {
        const element =
          token.hidden || depth >= DEPTH_MAX ? null : elementOf(token, list[i + 1], target);
        if (element) add(element);
        open.push(element ?? (open.at(-1) as HastRoot | Element));
        depth++;
      } else if (token.nesting === -1) {
        const closed = open.pop();
        depth--;
        if (token.type === "list_item_close" && closed?.type === "element") {
          taskListItem(closed, open.at(-1) as Element);
        }
      } else if (token.type === "inline") {
        walk(token.children ?? []);
      } else {
        for (const node of leafOf(token, target)) add(node);
      }
    });
  };
  walk(tokens);
  return root;
}

function element(
  tagName: string,
  properties: Properties = {},
  children: ElementContent[] = [],
): Element {
  return { type: "element", tagName, properties, children };
}

const text = (value: string) => ({ type: "text" as const, value });

function elementOf(
  token: Token,
  next: Token | undefined,
  target: (properties: Properties) => Properties,
): Element | null {
  switch (token.type) {
    case "s_open":
      return element("del");
    case "link_open": {
      // GitHub links bare URLs that start with a scheme or www. and e-mail addresses; markdown-it's
      // linkify would link any domain-like word (`notes.md`) as well
      const href = String(token.attrGet("href") ?? "");
      if (
        token.markup === "linkify" &&
        !/^(?:[a-z][a-z0-9+.-]*:\/\/|www\.)/i.test(next?.content ?? "") &&
        !href.startsWith("mailto:")
      ) {
        return null;
      }
      const title = token.attrGet("title");
      return element("a", target(title ? { href, title: String(title) } : { href }));
    }
    case "ordered_list_open": {
      const start = Number(token.attrGet("start") ?? 1);
      return element("ol", start === 1 ? {} : { start });
    }
    case "th_open":
    case "td_open": {
      const align = /text-align:(\w+)/.exec(String(token.attrGet("style") ?? ""))?.[1];
      return element(token.tag, align ? { align } : {});
    }
    default:
      return element(token.tag);
  }
}

function leafOf(token: Token, target: (properties: Properties) => Properties): ElementContent[] {
  switch (token.type) {
    case "text":
      return [text(token.content)];
    case "code_inline":
      return [element("code", {}, [text(token.content)])];
    case "softbreak":
    case "hardbreak":
      return [element("br"), text("\n")];
    case "fence": {
      const language = token.info.trim().split(/\s+/)[0];
      const code = element("code", language ? { className: [`language-${language}`] } : {}, [
        text(token.content),
      ]);
      return [element("pre", {}, [code])];
    }
    case "code_block":
      return [element("pre", {}, [element("code", {}, [text(token.content)])])];
    case "hr":
      return [element("hr")];
    case "image": {
      const alt = inlineText(token.children ?? []);
      return [
        element("a", target({ href: String(token.attrGet("src") ?? "") }), [
          text(alt ? `Image: ${alt}` : "Image"),
        ]),
      ];
    }
    default:
      // raw HTML (html_block, html_inline) is dropped
      return [];
  }
}

/** The checkbox a task list item's text starts with: `[ ]`, `[x]` or `[X]`, then a space. */
const TASK_MARKER = /^\[([ xX])\][ \t]/;

/**
 * GitHub's task list item: a list item whose text starts with `[ ]` or `[x]` and a space gets a
 * disabled checkbox in their place.
 */
function taskListItem(item: Element, list: Element) {
  const first =
    item.children[0]?.type === "element" && item.children[0].tagName === "p"
      ? item.children[0]
      : item;
  const lead = first.children[0];
  const marker = lead?.type === "text" ? TASK_MARKER.exec(lead.value) : null;
  if (!marker || lead?.type !== "text") return;
  lead.value = lead.value.slice(3);
  const checked = marker[1] !== " ";
  first.children.unshift(
    element("input", { type: "checkbox", disabled: true, ...(checked ? { checked } : {}) }),
  );
  item.properties.className = ["task-list-item"];
  list.properties.className = ["contains-task-list"];
}

/** The text of some inline tokens without their marks; line breaks as new lines. */
function inlineText(tokens: Token[]): string {
  return tokens
    .map((token) => {
      if (token.type === "text" || token.type === "code_inline") return token.content;
      if (token.type === "image") return inlineText(token.children ?? []);
      return token.type === "softbreak" || token.type === "hardbreak" ? "\n" : "";
    })
    .join("");
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

/** A table's delimiter row, once quote markers and indentation are set aside: `|---|:-:|`. */
const DELIMITER_ROW = /^[-:| \t]*$/;

/**
 * At most how many cells a body's tables would have, counted without parsing: for each line that
 * could be a table's delimiter row, its columns times the lines from the one before it to the
 * next blank line (the parser fills every row to the table's width, so a row of one character
 * costs as many cells as there are columns). It never counts fewer than the parser makes.
 */
export function markdownTableCells(source: string): number {
  const lines = source.split("\n").map((line) => line.replace(/^[ \t>]*/, ""));
  // non-blank lines from each one to the next blank line, counted backwards once
  const block = new Array<number>(lines.length + 1).fill(0);
  for (let i = lines.length - 1; i >= 0; i--) {
    block[i] = (lines[i] as string).trim() ? (block[i + 1] as number) + 1 : 0;
  }
  let cells = 0;
  lines.forEach((line, i) => {
    if (i === 0 || !line.includes("|") || !line.includes("-") || !DELIMITER_ROW.test(line)) return;
    const columns = line.match(/-+/g)?.length ?? 0;
    cells += columns * (block[i - 1] as number);
  });
  return cells;
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
  if (pastLimits(source)) return source.replace(/\s+/g, " ").trim();
  const parts: string[] = [];
  const tokens = parser.parse(source, {});
  tokens.forEach((token, i) => {
    if (token.type === "inline") {
      const words = inlineText(token.children ?? []);
      // a task's checkbox is no word: the item's first paragraph loses it
      const inItem = tokens[i - 2]?.type === "list_item_open";
      parts.push(inItem ? words.replace(TASK_MARKER, "") : words);
    } else if (token.type === "fence" || token.type === "code_block") parts.push(token.content);
  });
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

function outlineHeadings(tokens: Token[]) {
  const headings = tokens.filter((token) => token.type === "heading_open");
  // The body's top level becomes h2, and no heading skips a level below the one before it.
  const shift = 2 - Math.min(...headings.map((token) => Number(token.tag.slice(1))));
  let previous = 1;
  for (const heading of headings) {
    const depth = Math.min(Number(heading.tag.slice(1)) + shift, previous + 1, 6);
    heading.tag = `h${depth}`;
    previous = depth;
  }
}
