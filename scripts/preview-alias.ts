/**
 * Turns a git branch name into a Cloudflare Workers preview alias: lowercase letters, digits and
 * single dashes, starting with a letter, short enough that `<alias>-<worker>.<subdomain>.workers.dev`
 * stays a valid DNS label.
 */
export function previewAlias(branch: string, maxLength = 32): string {
  const alias = branch
    .toLowerCase()
    .replace(/^refs\/heads\//, "")
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^[^a-z]+/, "")
    .slice(0, maxLength)
    .replace(/-+$/, "");
  return alias || "preview";
}
