// Non-text contrast as a person sees it (WCAG 1.4.11: input borders, focus outlines), which axe
// does not measure: colours are read from the computed style and painted on a canvas, so any CSS
// colour (hex, oklch, color-mix, alpha) comes out as the sRGB pixel the screen shows, composited
// over the backgrounds behind the element.
import type { Locator } from "playwright-core";

export type Rgb = [number, number, number];

export interface Paint {
  /** What shows around the element: its ancestors' backgrounds, composited. */
  behind: Rgb;
  /** The element's own background over `behind`. */
  fill: Rgb;
  /** The top border over `behind`. */
  border: Rgb;
  borderWidth: string;
  /** The outline over `behind` (outlines are drawn outside the element). */
  outline: Rgb;
  outlineStyle: string;
  outlineWidth: string;
}

export function paintOf(locator: Locator): Promise<Paint> {
  return locator.evaluate(async (element) => {
    // The settled look: a focus outline fades in with the button's colour transition.
    const transitions = element.getAnimations().filter((a) => a instanceof CSSTransition);
    await Promise.all(transitions.map((transition) => transition.finished.catch(() => {})));
    const canvas = document.createElement("canvas");
    canvas.width = 1;
    canvas.height = 1;
    const context = canvas.getContext("2d", { willReadFrequently: true });
    if (!context) throw new Error("no 2d canvas");
    const pixel = (): [number, number, number] => {
      const [r = 0, g = 0, b = 0] = context.getImageData(0, 0, 1, 1).data;
      return [r, g, b];
    };
    const paint = (colour: string) => {
      context.fillStyle = colour;
      context.fillRect(0, 0, 1, 1);
    };
    const layers: string[] = [];
    for (let e = element.parentElement; e; e = e.parentElement) {
      layers.unshift(getComputedStyle(e).backgroundColor);
    }
    const over = (top?: string) => {
      context.clearRect(0, 0, 1, 1);
      // The browser's own canvas (white, or black in a dark scheme); the body's background
      // covers it on the app's pages.
      paint(matchMedia("(prefers-color-scheme: dark)").matches ? "#000" : "#fff");
      for (const layer of layers) paint(layer);
      if (top) paint(top);
      return pixel();
    };
    const style = getComputedStyle(element);
    return {
      behind: over(),
      fill: over(style.backgroundColor),
      border: over(style.borderTopColor),
      borderWidth: style.borderTopWidth,
      outline: over(style.outlineColor),
      outlineStyle: style.outlineStyle,
      outlineWidth: style.outlineWidth,
    };
  });
}

/** WCAG contrast ratio of two sRGB colours (1 to 21). */
export function contrast(a: Rgb, b: Rgb): number {
  const [x, y] = [luminance(a), luminance(b)];
  return (Math.max(x, y) + 0.05) / (Math.min(x, y) + 0.05);
}

function luminance([r, g, b]: Rgb): number {
  const channel = (c: number) => {
    const s = c / 255;
    return s <= 0.04045 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * channel(r) + 0.7152 * channel(g) + 0.0722 * channel(b);
}
