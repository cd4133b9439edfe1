import type { Config } from "@react-router/dev/config";

export default {
  ssr: true,
  future: {
    // The dev server scans every route module (and what each imports, dynamically too) for the
    // browser's libraries when it starts, and pre-bundles them all. Without it, Vite met a library
    // only when a page first asked for it: @supabase/ssr (the Supabase client a page loads once it
    // is idle) on the first visit after an install, hast-util-to-jsx-runtime on the first note
    // opened. Each time it bundled the library and reloaded the page, losing what had been typed
    // into it. Development only: the build is the same apart from this flag's own value.
    unstable_optimizeDeps: true,
  },
} satisfies Config;
